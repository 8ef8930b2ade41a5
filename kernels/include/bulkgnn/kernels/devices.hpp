#pragma once

#include "bulkgnn/core/executor.hpp"

#include <cstdint>
#include <string>
#include <vector>

namespace bulkgnn::kernels {

// A GPU the CUDA runtime reports.
struct cuda_device {
  int id = 0;
  std::string name;
  std::int64_t memory_bytes = 0;
  int compute_capability = 0;  // major · 10 + minor: 90 for Hopper
};

// Whether this build has the CUDA back end (BULKGNN_ENABLE_CUDA found nvcc).
[[nodiscard]] bool cuda_compiled();

// The GPUs this process can use; empty without a driver, without a device, or
// in a build without CUDA (none of these is an error: the cpu back end runs).
[[nodiscard]] std::vector<cuda_device> visible_cuda_devices();

// A cuda executor on GPU `device`: its own non-blocking stream, device
// memory from a stream-ordered pool that keeps what is freed, and pinned host
// memory. Throws option_error naming the device if this build has no CUDA
// back end or the GPU is not visible.
[[nodiscard]] executor make_cuda_executor(int device = 0);

// Waits until GPU `device` has finished everything queued on it, on every
// stream: a consumer's (torch's) too, before memory it may still read is
// freed. Throws in a build without CUDA.
void synchronize_device(int device);

// An executor of back end `kind`: the host back ends on `threads` threads (0:
// every core), cuda on GPU 0 (make_cuda_executor).
[[nodiscard]] executor make_executor(backend kind, int threads = 0);

}  // namespace bulkgnn::kernels
