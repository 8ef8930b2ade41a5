#pragma once

#include "bulkgnn/core/buffer.hpp"
#include "bulkgnn/core/executor.hpp"
#include "check.cuh"
#include "context.cuh"

#include <cstdint>

// What every kernel file of the back end needs around a launch.
namespace bulkgnn::kernels::cuda {

inline constexpr int threads_per_block = 256;

// Blocks of threads_per_block covering `count` threads (at least one block).
[[nodiscard]] inline unsigned blocks_for(std::int64_t count) {
  return static_cast<unsigned>((count + threads_per_block - 1) / threads_per_block) + (count == 0);
}

// Throws naming the kernel if its launch failed.
#define BULKGNN_CUDA_CHECK_LAUNCH() BULKGNN_CUDA_CHECK(cudaGetLastError())

// One value copied back to the host from device or pinned memory (waits for
// the stream).
template <class T>
[[nodiscard]] T read_back(const executor& exec, const T* device_value) {
  T value{};
  BULKGNN_CUDA_CHECK(
      cudaMemcpyAsync(&value, device_value, sizeof(T), cudaMemcpyDefault, stream_of(exec)));
  BULKGNN_CUDA_CHECK(cudaStreamSynchronize(stream_of(exec)));
  return value;
}

// A zeroed device counter, e.g. a flag that kernels raise on bad input.
[[nodiscard]] inline buffer<int> device_flag(const executor& exec) {
  buffer<int> flag(1, exec.memory());
  BULKGNN_CUDA_CHECK(cudaMemsetAsync(flag.data(), 0, sizeof(int), stream_of(exec)));
  return flag;
}

}  // namespace bulkgnn::kernels::cuda
