#pragma once

#include "bulkgnn/core/buffer.hpp"
#include "bulkgnn/core/executor.hpp"
#include "check.cuh"
#include "context.cuh"

#include <cub/device/device_radix_sort.cuh>
#include <cub/device/device_scan.cuh>

#include <cstdint>

// Small device building blocks that several kernel files share.
namespace bulkgnn::kernels::cuda {

// The last k in [0, count) with offsets[k] <= i, for ascending offsets
// (offsets of segments or CSR rows, which may repeat where a segment is
// empty): the segment or row that holds element i.
__device__ inline std::int64_t last_offset_at_or_below(const std::int64_t* offsets,
                                                       std::int64_t count, std::int64_t i) {
  std::int64_t low = 0;
  std::int64_t high = count;
  while (high - low > 1) {
    const std::int64_t middle = (low + high) / 2;
    if (offsets[middle] <= i)
      low = middle;
    else
      high = middle;
  }
  return low;
}

// The sort key (segment, vertex) of element i of segmented vertices.
__device__ inline std::uint64_t segment_vertex_key(const std::int64_t* offsets,
                                                   std::int64_t segments, std::int64_t i,
                                                   std::int32_t vertex) {
  const std::int64_t segment = last_offset_at_or_below(offsets, segments + 1, i);
  return (static_cast<std::uint64_t>(segment) << 32) | static_cast<std::uint32_t>(vertex);
}

// The bits a radix sort reads of (row << 32 | column) keys for `rows` rows.
inline int row_key_bits(std::int64_t rows) {
  int bits = 32;
  while (bits < 64 && (std::int64_t{1} << (bits - 32)) < rows) ++bits;
  return bits;
}

// values[0, count) replaced by their inclusive prefix sums, on the
// executor's stream.
template <class T>
void inclusive_scan(const executor& exec, T* values, std::int64_t count) {
  std::size_t bytes = 0;
  BULKGNN_CUDA_CHECK(
      cub::DeviceScan::InclusiveSum(nullptr, bytes, values, values, count, stream_of(exec)));
  buffer<std::byte> scratch(bytes, exec.memory());
  BULKGNN_CUDA_CHECK(
      cub::DeviceScan::InclusiveSum(scratch.data(), bytes, values, values, count, stream_of(exec)));
}

// Sorts (keys, values) pairs by the key bits [0, end_bit), stably, into the
// given outputs, on the executor's stream.
inline void sort_pairs(const executor& exec, const std::uint64_t* keys_in, std::uint64_t* keys_out,
                       const std::int64_t* values_in, std::int64_t* values_out, std::int64_t count,
                       int end_bit = 64) {
  std::size_t bytes = 0;
  BULKGNN_CUDA_CHECK(cub::DeviceRadixSort::SortPairs(nullptr, bytes, keys_in, keys_out, values_in,
                                                     values_out, count, 0, end_bit,
                                                     stream_of(exec)));
  buffer<std::byte> scratch(bytes, exec.memory());
  BULKGNN_CUDA_CHECK(cub::DeviceRadixSort::SortPairs(scratch.data(), bytes, keys_in, keys_out,
                                                     values_in, values_out, count, 0, end_bit,
                                                     stream_of(exec)));
}

}  // namespace bulkgnn::kernels::cuda
