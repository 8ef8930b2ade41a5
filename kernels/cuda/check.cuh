#pragma once

#include <cuda_runtime.h>

namespace bulkgnn::kernels::cuda {

// Throws bulkgnn::error "<call> failed at <file>:<line>: <message>".
[[noreturn]] void throw_cuda_error(const char* call, const char* file, int line,
                                   const char* message);

// Throws bulkgnn::option_error with `message` (a bad argument found on the
// device, e.g. "sample_rows: rows holds a vertex outside [0, 120)").
[[noreturn]] void throw_argument_error(const char* message);

}  // namespace bulkgnn::kernels::cuda

// Every CUDA runtime call of the back end goes through this macro, so a
// failure names the call, the file and the line (GraphBolt's CUDA_CALL,
// cuCollections' CUCO_CUDA_TRY).
#define BULKGNN_CUDA_CHECK(call)                                                           \
  do {                                                                                     \
    const cudaError_t bulkgnn_cuda_status = (call);                                        \
    if (bulkgnn_cuda_status != cudaSuccess)                                                \
      ::bulkgnn::kernels::cuda::throw_cuda_error(#call, __FILE__, __LINE__,                \
                                                 cudaGetErrorString(bulkgnn_cuda_status)); \
  } while (false)
