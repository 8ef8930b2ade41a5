#pragma once

#include "bulkgnn/core/executor.hpp"

#include <cuda_runtime.h>

#include <memory>

namespace bulkgnn::kernels::cuda {

// The device context of a cuda executor on GPU `device` (which must be
// visible): a non-blocking stream and that GPU's default memory pool, set to
// keep freed memory for reuse.
[[nodiscard]] std::shared_ptr<device_context> create_context(int device);

// The stream of a cuda executor, as the CUDA type.
[[nodiscard]] inline cudaStream_t stream_of(const executor& exec) {
  return static_cast<cudaStream_t>(exec.device()->stream());
}

}  // namespace bulkgnn::kernels::cuda
