#pragma once

#include "bulkgnn/core/buffer.hpp"
#include "bulkgnn/core/executor.hpp"
#include "check.cuh"
#include "context.cuh"
#include "kernels.hpp"

#include <cstdint>
#include <span>

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

// Offsets (of segments or CSR rows) in device memory, for kernels that read
// them per item. The sampler keeps segment offsets in pinned host memory,
// where the host reads them; a kernel reading them there crosses PCIe on
// every access, and a binary search per item made that millions of dependent
// reads per bulk. Offsets already in device memory are used in place; others
// are copied once, on the executor's stream, for the call that holds this.
class device_offsets {
 public:
  device_offsets(const executor& exec, std::span<const std::int64_t> offsets)
      : data_(offsets.data()) {
    if (offsets.empty() || space_of(offsets.data()) == memory_space::device) return;
    copy_ = buffer<std::int64_t>(offsets.size(), exec.memory());
    BULKGNN_CUDA_CHECK(cudaMemcpyAsync(copy_.data(), offsets.data(), offsets.size_bytes(),
                                       cudaMemcpyDefault, stream_of(exec)));
    data_ = copy_.data();
  }
  // Moves keep data() (the buffer moves its storage); a copy would not.
  device_offsets(device_offsets&&) noexcept = default;
  device_offsets& operator=(device_offsets&&) noexcept = default;
  device_offsets(const device_offsets&) = delete;
  device_offsets& operator=(const device_offsets&) = delete;
  ~device_offsets() = default;

  [[nodiscard]] const std::int64_t* data() const { return data_; }

 private:
  buffer<std::int64_t> copy_;
  const std::int64_t* data_;
};

// A zeroed device counter, e.g. a flag that kernels raise on bad input.
[[nodiscard]] inline buffer<int> device_flag(const executor& exec) {
  buffer<int> flag(1, exec.memory());
  BULKGNN_CUDA_CHECK(cudaMemsetAsync(flag.data(), 0, sizeof(int), stream_of(exec)));
  return flag;
}

}  // namespace bulkgnn::kernels::cuda
