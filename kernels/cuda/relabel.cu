#include "kernels.hpp"
#include "launch.cuh"

#include <cub/device/device_radix_sort.cuh>
#include <cub/device/device_scan.cuh>

#include <algorithm>
#include <vector>

// relabel_by_segment without a hash table: sorting gives the same numbering
// as the host back ends' first-appearance probing. Items are the
// destinations (order 0 .. D-1) and then the sampled entries (order D + e),
// keyed by (segment, vertex). A stable sort by key puts each (segment,
// vertex)'s first appearance at the head of its run; sorting the heads by
// (segment, first order) gives each segment's sources in local-id order:
// destinations first (their orders are the smallest), then the others by
// first appearance in the segment's rows.
namespace bulkgnn::kernels::cuda {
namespace {

// Bits for the first appearance's order in a unique's sort key (under it,
// the segment): 2^40 items, far beyond any bulk.
constexpr int order_bits = 40;

__device__ std::int64_t last_at_or_below(const std::int64_t* offsets, std::int64_t count,
                                         std::int64_t i) {
  // The last k with offsets[k] <= i (segments may be empty).
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

__global__ void make_items(const vertex_t* destinations, const std::int64_t* segment_offsets,
                           std::int64_t segments, std::int64_t destination_count,
                           const edge_t* indptr, const vertex_t* columns, std::int64_t entries,
                           std::uint64_t* keys, std::int64_t* orders) {
  const std::int64_t i = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x;
  if (i >= destination_count + entries) return;
  std::int64_t row = i;
  vertex_t vertex = 0;
  if (i < destination_count) {
    vertex = destinations[i];
  } else {
    const std::int64_t e = i - destination_count;
    row = last_at_or_below(indptr, destination_count + 1, e);
    vertex = columns[e];
  }
  const std::int64_t segment = last_at_or_below(segment_offsets, segments + 1, row);
  keys[i] = (static_cast<std::uint64_t>(segment) << 32) | static_cast<std::uint32_t>(vertex);
  orders[i] = i;
}

__global__ void mark_run_heads(const std::uint64_t* keys, std::int64_t count, std::int64_t* heads) {
  const std::int64_t i = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x;
  if (i < count) heads[i] = (i == 0 || keys[i] != keys[i - 1]) ? 1 : 0;
}

// run_ids holds the inclusive scan of the heads: run r's head is where it
// first reaches r + 1.
__global__ void collect_uniques(const std::uint64_t* keys, const std::int64_t* orders,
                                const std::int64_t* run_ids, std::int64_t count,
                                std::uint64_t* unique_keys, std::int64_t* unique_runs,
                                unsigned long long* per_segment) {
  const std::int64_t i = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x;
  if (i >= count || (i > 0 && run_ids[i] == run_ids[i - 1])) return;
  const std::int64_t run = run_ids[i] - 1;
  const std::uint64_t segment = keys[i] >> 32;
  unique_keys[run] = (segment << order_bits) | static_cast<std::uint64_t>(orders[i]);
  unique_runs[run] = run;
  atomicAdd(per_segment + segment, 1ull);
}

__global__ void number_uniques(const std::uint64_t* sorted_unique_keys,
                               const std::int64_t* sorted_runs, std::int64_t uniques,
                               const std::uint64_t* keys_by_run_head, const std::int64_t* offsets,
                               std::int64_t* local_of_run, vertex_t* sources) {
  const std::int64_t p = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x;
  if (p >= uniques) return;
  const auto segment = static_cast<std::int64_t>(sorted_unique_keys[p] >> order_bits);
  const std::int64_t run = sorted_runs[p];
  local_of_run[run] = p - offsets[segment];
  sources[p] = static_cast<vertex_t>(keys_by_run_head[run] & 0xFFFFFFFFu);
}

__global__ void run_head_keys(const std::uint64_t* keys, const std::int64_t* run_ids,
                              std::int64_t count, std::uint64_t* keys_by_run) {
  const std::int64_t i = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x;
  if (i < count && (i == 0 || run_ids[i] != run_ids[i - 1])) keys_by_run[run_ids[i] - 1] = keys[i];
}

__global__ void write_columns(const std::int64_t* orders, const std::int64_t* run_ids,
                              std::int64_t count, std::int64_t destination_count,
                              const std::int64_t* local_of_run, vertex_t* out_columns) {
  const std::int64_t i = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x;
  if (i >= count || orders[i] < destination_count) return;
  out_columns[orders[i] - destination_count] = static_cast<vertex_t>(local_of_run[run_ids[i] - 1]);
}

// Sorts (keys, values) pairs by key, stably, into the given outputs.
void sort_pairs(const executor& exec, const std::uint64_t* keys_in, std::uint64_t* keys_out,
                const std::int64_t* values_in, std::int64_t* values_out, std::int64_t count) {
  std::size_t bytes = 0;
  BULKGNN_CUDA_CHECK(cub::DeviceRadixSort::SortPairs(nullptr, bytes, keys_in, keys_out, values_in,
                                                     values_out, count, 0, 64, stream_of(exec)));
  buffer<std::byte> scratch(bytes, exec.memory());
  BULKGNN_CUDA_CHECK(cub::DeviceRadixSort::SortPairs(scratch.data(), bytes, keys_in, keys_out,
                                                     values_in, values_out, count, 0, 64,
                                                     stream_of(exec)));
}

void inclusive_sum(const executor& exec, std::int64_t* values, std::int64_t count) {
  std::size_t bytes = 0;
  BULKGNN_CUDA_CHECK(
      cub::DeviceScan::InclusiveSum(nullptr, bytes, values, values, count, stream_of(exec)));
  buffer<std::byte> scratch(bytes, exec.memory());
  BULKGNN_CUDA_CHECK(
      cub::DeviceScan::InclusiveSum(scratch.data(), bytes, values, values, count, stream_of(exec)));
}

}  // namespace

relabelled_blocks relabel_by_segment(const executor& exec, const segmented_vertices& destinations,
                                     csr_view sampled) {
  const cudaStream_t stream = stream_of(exec);
  memory_resource& device = exec.memory();
  memory_resource& pinned = exec.device()->pinned_memory();
  const std::int64_t segments = destinations.segments();
  const auto destination_count = static_cast<std::int64_t>(destinations.vertices.size());
  const auto entries = static_cast<std::int64_t>(sampled.indices.size());
  const std::int64_t count = destination_count + entries;

  relabelled_blocks out;
  out.blocks.rows = sampled.rows;
  out.blocks.indptr = buffer<edge_t>(sampled.indptr.size(), device);
  BULKGNN_CUDA_CHECK(cudaMemcpyAsync(out.blocks.indptr.data(), sampled.indptr.data(),
                                     sampled.indptr.size_bytes(), cudaMemcpyDefault, stream));
  out.blocks.indices = buffer<vertex_t>(static_cast<std::size_t>(entries), device);
  if (sampled.weighted()) {
    out.blocks.values = buffer<float>(sampled.values.size(), device);
    BULKGNN_CUDA_CHECK(cudaMemcpyAsync(out.blocks.values.data(), sampled.values.data(),
                                       sampled.values.size_bytes(), cudaMemcpyDefault, stream));
  }
  // Offsets stay where the host reads them (pinned: the device reads them
  // through UVA); the counts behind them are summed on the device.
  buffer<unsigned long long> per_segment(static_cast<std::size_t>(segments), device);
  BULKGNN_CUDA_CHECK(cudaMemsetAsync(per_segment.data(), 0,
                                     per_segment.size() * sizeof(unsigned long long), stream));
  if (count == 0) {
    out.sources.vertices = buffer<vertex_t>(device);
    out.sources.offsets = buffer<std::int64_t>(static_cast<std::size_t>(segments) + 1, 0, pinned);
    return out;
  }

  buffer<std::uint64_t> keys(static_cast<std::size_t>(count), device);
  buffer<std::int64_t> orders(static_cast<std::size_t>(count), device);
  make_items<<<blocks_for(count), threads_per_block, 0, stream>>>(
      destinations.vertices.data(), destinations.offsets.data(), segments, destination_count,
      sampled.indptr.data(), sampled.indices.data(), entries, keys.data(), orders.data());
  BULKGNN_CUDA_CHECK_LAUNCH();
  buffer<std::uint64_t> sorted_keys(static_cast<std::size_t>(count), device);
  buffer<std::int64_t> sorted_orders(static_cast<std::size_t>(count), device);
  sort_pairs(exec, keys.data(), sorted_keys.data(), orders.data(), sorted_orders.data(), count);

  buffer<std::int64_t> run_ids(static_cast<std::size_t>(count), device);
  mark_run_heads<<<blocks_for(count), threads_per_block, 0, stream>>>(sorted_keys.data(), count,
                                                                      run_ids.data());
  BULKGNN_CUDA_CHECK_LAUNCH();
  inclusive_sum(exec, run_ids.data(), count);
  const std::int64_t uniques = read_back(exec, run_ids.data() + count - 1);

  buffer<std::uint64_t> unique_keys(static_cast<std::size_t>(uniques), device);
  buffer<std::int64_t> unique_runs(static_cast<std::size_t>(uniques), device);
  collect_uniques<<<blocks_for(count), threads_per_block, 0, stream>>>(
      sorted_keys.data(), sorted_orders.data(), run_ids.data(), count, unique_keys.data(),
      unique_runs.data(), per_segment.data());
  BULKGNN_CUDA_CHECK_LAUNCH();
  buffer<std::uint64_t> keys_by_run(static_cast<std::size_t>(uniques), device);
  run_head_keys<<<blocks_for(count), threads_per_block, 0, stream>>>(
      sorted_keys.data(), run_ids.data(), count, keys_by_run.data());
  BULKGNN_CUDA_CHECK_LAUNCH();
  buffer<std::uint64_t> sorted_unique_keys(static_cast<std::size_t>(uniques), device);
  buffer<std::int64_t> sorted_runs(static_cast<std::size_t>(uniques), device);
  sort_pairs(exec, unique_keys.data(), sorted_unique_keys.data(), unique_runs.data(),
             sorted_runs.data(), uniques);

  std::vector<unsigned long long> sizes(static_cast<std::size_t>(segments));
  BULKGNN_CUDA_CHECK(cudaMemcpyAsync(sizes.data(), per_segment.data(),
                                     sizes.size() * sizeof(unsigned long long),
                                     cudaMemcpyDeviceToHost, stream));
  BULKGNN_CUDA_CHECK(cudaStreamSynchronize(stream));
  out.sources.offsets = buffer<std::int64_t>(static_cast<std::size_t>(segments) + 1, 0, pinned);
  std::int64_t largest = 0;
  for (std::int64_t j = 0; j < segments; ++j) {
    const auto size = static_cast<std::int64_t>(sizes[j]);
    out.sources.offsets[j + 1] = out.sources.offsets[j] + size;
    largest = std::max(largest, size);
  }
  out.blocks.cols = largest;
  out.sources.vertices = buffer<vertex_t>(static_cast<std::size_t>(uniques), device);
  buffer<std::int64_t> local_of_run(static_cast<std::size_t>(uniques), device);
  number_uniques<<<blocks_for(uniques), threads_per_block, 0, stream>>>(
      sorted_unique_keys.data(), sorted_runs.data(), uniques, keys_by_run.data(),
      out.sources.offsets.data(), local_of_run.data(), out.sources.vertices.data());
  BULKGNN_CUDA_CHECK_LAUNCH();
  write_columns<<<blocks_for(count), threads_per_block, 0, stream>>>(
      sorted_orders.data(), run_ids.data(), count, destination_count, local_of_run.data(),
      out.blocks.indices.data());
  BULKGNN_CUDA_CHECK_LAUNCH();
  // The scratch buffers above are freed in stream order when this returns.
  return out;
}

}  // namespace bulkgnn::kernels::cuda
