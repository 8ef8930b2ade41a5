#pragma once

#include <cublas_v2.h>

#include <cstdint>

namespace bulkgnn::kernels::cuda {

// The cuBLAS functions of the fast GEMM (gemm_mode::fast), from libcublas
// opened on first use rather than linked: linked, libcublas and libcublasLt
// (600 MB of code) are mapped and relocated in every process at start-up, GPU
// or not, which held 225 MB resident for `bulkgnn --help` and broke the
// partitioned-data test's memory bounds.
struct cublas_api {
  decltype(&cublasCreate_v2) create = nullptr;
  decltype(&cublasDestroy_v2) destroy = nullptr;
  decltype(&cublasSetStream_v2) set_stream = nullptr;
  decltype(&cublasSetMathMode) set_math_mode = nullptr;
  decltype(&cublasSgemm_v2) sgemm = nullptr;
  decltype(&cublasSgemv_v2) sgemv = nullptr;
  decltype(&cublasGetStatusString) status_string = nullptr;
};

// Opens libcublas.so.<major> once: through the loader's search path, else
// from the folder of the libcudart this process runs with. Throws naming the
// library and dlerror()'s reason where neither works.
[[nodiscard]] const cublas_api& cublas();

// `size` as the int cuBLAS takes; throws naming `function` past 2^31 - 1.
[[nodiscard]] int cublas_size(std::int64_t size, const char* function);

// Throws bulkgnn::error "<call> failed at <file>:<line>: <cuBLAS's message>".
[[noreturn]] void throw_cublas_error(const char* call, const char* file, int line,
                                     cublasStatus_t status);

}  // namespace bulkgnn::kernels::cuda

// Every cuBLAS call goes through this macro, as BULKGNN_CUDA_CHECK for the
// runtime's.
#define BULKGNN_CUBLAS_CHECK(call)                                            \
  do {                                                                        \
    const cublasStatus_t bulkgnn_cublas_status = (call);                      \
    if (bulkgnn_cublas_status != CUBLAS_STATUS_SUCCESS)                       \
      ::bulkgnn::kernels::cuda::throw_cublas_error(#call, __FILE__, __LINE__, \
                                                   bulkgnn_cublas_status);    \
  } while (false)
