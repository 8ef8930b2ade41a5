#include "kernels.hpp"
#include "launch.cuh"

namespace bulkgnn::kernels::cuda {
namespace {

// The segment of element i: the last k with offsets[k] <= i (segments may
// be empty). `offsets` is in pinned host memory, read through UVA.
__device__ std::int64_t segment_of(const std::int64_t* offsets, std::int64_t segments,
                                   std::int64_t i) {
  std::int64_t low = 0;
  std::int64_t high = segments + 1;
  while (high - low > 1) {
    const std::int64_t middle = (low + high) / 2;
    if (offsets[middle] <= i)
      low = middle;
    else
      high = middle;
  }
  return low;
}

__global__ void repeat_values(const std::int64_t* offsets, std::int64_t segments,
                              const std::uint32_t* values, std::uint32_t* out, std::int64_t count) {
  const std::int64_t i = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x;
  if (i < count) out[i] = values[segment_of(offsets, segments, i)];
}

}  // namespace

buffer<std::uint32_t> repeat_per_segment(const executor& exec,
                                         std::span<const std::int64_t> offsets,
                                         std::span<const std::uint32_t> values) {
  const std::int64_t count = offsets.back();
  buffer<std::uint32_t> out(static_cast<std::size_t>(count), exec.memory());
  if (count == 0) return out;
  repeat_values<<<blocks_for(count), threads_per_block, 0, stream_of(exec)>>>(
      offsets.data(), static_cast<std::int64_t>(values.size()), values.data(), out.data(), count);
  BULKGNN_CUDA_CHECK_LAUNCH();
  return out;
}

}  // namespace bulkgnn::kernels::cuda
