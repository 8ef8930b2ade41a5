#pragma once

#include "bulkgnn/core/executor.hpp"

#include "cublas_api.hpp"

#include <cuda_runtime.h>

#include <memory>
#include <mutex>

namespace bulkgnn::kernels::cuda {

// The device context of a cuda executor on GPU `device` (which must be
// visible): a non-blocking stream and that GPU's default memory pool, set to
// keep freed memory for reuse.
[[nodiscard]] std::shared_ptr<device_context> create_context(int device);

// The cuBLAS handle of a cuda executor's context, bound to its stream, with
// the lock that keeps one thread at a time on it (cuBLAS handles are not
// for concurrent use). Made on first use: runs that never ask for the fast
// GEMM never load cuBLAS's kernels.
struct blas_session {
  std::unique_lock<std::mutex> lock;
  cublasHandle_t handle = nullptr;
};
[[nodiscard]] blas_session blas_of(const executor& exec);

// The stream of a cuda executor, as the CUDA type.
[[nodiscard]] inline cudaStream_t stream_of(const executor& exec) {
  return static_cast<cudaStream_t>(exec.device()->stream());
}

}  // namespace bulkgnn::kernels::cuda
