#include "bulkgnn/kernels/rules/hash_probe.hpp"
#include "kernels.hpp"
#include "launch.cuh"
#include "primitives.cuh"

#include <cub/device/device_radix_sort.cuh>

#include <algorithm>
#include <vector>

// relabel_by_segment gives the host back ends' numbering: per segment, the
// destinations, then every other sampled vertex in order of first
// appearance. Items are the destinations (order 0 .. D-1) and then the
// sampled entries (order D + e), keyed by (segment, vertex). Two ways group
// the items by key and find each group's first order:
// - sort: a stable radix sort by key; a group is a run, its head the first
//   appearance;
// - hash: an open-addressing table (rules/hash_probe.hpp); a group is a
//   slot, its first order an atomicMin.
// Then one shared tail: sorting the groups' (segment, first order) numbers
// each segment's sources in local-id order (destinations first, as their
// orders are the smallest), and every entry takes its group's local id.
namespace bulkgnn::kernels::cuda {
namespace {

// Bits for the first appearance's order in a unique's sort key (under it,
// the segment): 2^40 items, far beyond any bulk.
constexpr int order_bits = 40;
constexpr unsigned long long no_order = ~0ull;

// Item i: destination i, then (destination_count + e) entry e of `sampled`
// (whose rows are the destinations), keyed by (segment, vertex).
__global__ void make_items(const vertex_t* destinations, const std::int64_t* segment_offsets,
                           std::int64_t segments, std::int64_t destination_count, csr_view sampled,
                           std::int64_t entries, std::uint64_t* keys) {
  const std::int64_t i = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x;
  if (i >= destination_count + entries) return;
  std::int64_t row = i;
  vertex_t vertex = 0;
  if (i < destination_count) {
    vertex = destinations[i];
  } else {
    const std::int64_t e = i - destination_count;
    row = last_offset_at_or_below(sampled.indptr.data(), destination_count + 1,
                                  sampled.indptr.data()[0] + e);
    vertex = sampled.column_at(e);
  }
  keys[i] = segment_vertex_key(segment_offsets, segments, row, vertex);
}

__global__ void rebase(const edge_t* indptr, std::int64_t count, edge_t* out) {
  const std::int64_t i = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x;
  if (i < count) out[i] = indptr[i] - indptr[0];
}

__global__ void iota(std::int64_t* values, std::int64_t count) {
  const std::int64_t i = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x;
  if (i < count) values[i] = i;
}

__global__ void fill(unsigned long long* values, std::int64_t count, unsigned long long value) {
  const std::int64_t i = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x;
  if (i < count) values[i] = value;
}

__global__ void mark_run_heads(const std::uint64_t* keys, std::int64_t count, std::int64_t* heads) {
  const std::int64_t i = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x;
  if (i < count) heads[i] = (i == 0 || keys[i] != keys[i - 1]) ? 1 : 0;
}

// Items sorted by key; run_ids is the inclusive scan of the run heads. Each
// item learns its run, and each run its key and (at its head: the sort is
// stable) its first order.
__global__ void runs_as_groups(const std::uint64_t* sorted_keys, const std::int64_t* sorted_orders,
                               const std::int64_t* run_ids, std::int64_t count,
                               std::int64_t* group_of_item, std::uint64_t* group_key,
                               unsigned long long* first_order) {
  const std::int64_t k = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x;
  if (k >= count) return;
  const std::int64_t run = run_ids[k] - 1;
  group_of_item[sorted_orders[k]] = run;
  if (k > 0 && run_ids[k] == run_ids[k - 1]) return;
  group_key[run] = sorted_keys[k];
  first_order[run] = static_cast<unsigned long long>(sorted_orders[k]);
}

__global__ void hash_items(const std::uint64_t* keys, std::int64_t count, std::uint64_t mask,
                           unsigned long long* table_keys, std::int64_t* group_of_item,
                           unsigned long long* first_order) {
  const std::int64_t i = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x;
  if (i >= count) return;
  const std::uint64_t slot = rules::find_or_claim_slot(
      keys[i], mask, [&](std::uint64_t at, std::uint64_t expected, std::uint64_t desired) {
        return static_cast<std::uint64_t>(atomicCAS(table_keys + at, expected, desired));
      });
  group_of_item[i] = static_cast<std::int64_t>(slot);
  atomicMin(first_order + slot, static_cast<unsigned long long>(i));
}

// Each group's first item makes it a unique, keyed by (segment, first
// order); the order uniques are written in does not matter, since they are
// sorted by that key next.
__global__ void collect_uniques(const std::int64_t* group_of_item, std::int64_t count,
                                const std::uint64_t* group_key,
                                const unsigned long long* first_order,
                                unsigned long long* unique_count, std::uint64_t* unique_keys,
                                std::int64_t* unique_groups, unsigned long long* per_segment) {
  const std::int64_t i = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x;
  if (i >= count) return;
  const std::int64_t group = group_of_item[i];
  if (first_order[group] != static_cast<unsigned long long>(i)) return;
  const std::uint64_t segment = group_key[group] >> 32;
  const auto at = static_cast<std::int64_t>(atomicAdd(unique_count, 1ull));
  unique_keys[at] = (segment << order_bits) | static_cast<std::uint64_t>(i);
  unique_groups[at] = group;
  atomicAdd(per_segment + segment, 1ull);
}

__global__ void number_uniques(const std::uint64_t* sorted_unique_keys,
                               const std::int64_t* sorted_groups, std::int64_t uniques,
                               const std::uint64_t* group_key, const std::int64_t* offsets,
                               std::int64_t* local_of_group, vertex_t* sources) {
  const std::int64_t p = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x;
  if (p >= uniques) return;
  const auto segment = static_cast<std::int64_t>(sorted_unique_keys[p] >> order_bits);
  const std::int64_t group = sorted_groups[p];
  local_of_group[group] = p - offsets[segment];
  sources[p] = static_cast<vertex_t>(group_key[group] & 0xFFFFFFFFu);
}

__global__ void write_columns(const std::int64_t* group_of_item, std::int64_t destination_count,
                              std::int64_t entries, const std::int64_t* local_of_group,
                              vertex_t* out_columns) {
  const std::int64_t e = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x;
  if (e < entries)
    out_columns[e] = static_cast<vertex_t>(local_of_group[group_of_item[destination_count + e]]);
}

// The items grouped by key: each item's group, and per group its key and
// first order (groups without items hold no_order).
struct item_groups {
  buffer<std::int64_t> group_of_item;
  buffer<std::uint64_t> group_key;
  buffer<unsigned long long> first_order;
};

item_groups group_by_sorting(const executor& exec, const buffer<std::uint64_t>& keys) {
  const cudaStream_t stream = stream_of(exec);
  memory_resource& device = exec.memory();
  const auto count = static_cast<std::int64_t>(keys.size());
  buffer<std::int64_t> orders(keys.size(), device);
  iota<<<blocks_for(count), threads_per_block, 0, stream>>>(orders.data(), count);
  BULKGNN_CUDA_CHECK_LAUNCH();
  buffer<std::uint64_t> sorted_keys(keys.size(), device);
  buffer<std::int64_t> sorted_orders(keys.size(), device);
  sort_pairs(exec, keys.data(), sorted_keys.data(), orders.data(), sorted_orders.data(), count);
  buffer<std::int64_t> run_ids(keys.size(), device);
  mark_run_heads<<<blocks_for(count), threads_per_block, 0, stream>>>(sorted_keys.data(), count,
                                                                      run_ids.data());
  BULKGNN_CUDA_CHECK_LAUNCH();
  inclusive_scan(exec, run_ids.data(), count);
  const std::int64_t runs = read_back(exec, run_ids.data() + count - 1);
  item_groups groups{buffer<std::int64_t>(keys.size(), device),
                     buffer<std::uint64_t>(static_cast<std::size_t>(runs), device),
                     buffer<unsigned long long>(static_cast<std::size_t>(runs), device)};
  runs_as_groups<<<blocks_for(count), threads_per_block, 0, stream>>>(
      sorted_keys.data(), sorted_orders.data(), run_ids.data(), count, groups.group_of_item.data(),
      groups.group_key.data(), groups.first_order.data());
  BULKGNN_CUDA_CHECK_LAUNCH();
  return groups;
}

item_groups group_by_hashing(const executor& exec, const buffer<std::uint64_t>& keys) {
  const cudaStream_t stream = stream_of(exec);
  memory_resource& device = exec.memory();
  const auto count = static_cast<std::int64_t>(keys.size());
  const std::uint64_t capacity = rules::hash_capacity(keys.size());
  item_groups groups{buffer<std::int64_t>(keys.size(), device),
                     buffer<std::uint64_t>(capacity, device),
                     buffer<unsigned long long>(capacity, device)};
  BULKGNN_CUDA_CHECK(
      cudaMemsetAsync(groups.group_key.data(), 0xFF, capacity * sizeof(std::uint64_t), stream));
  static_assert(rules::empty_slot_key == ~std::uint64_t{0}, "the memset writes all ones");
  fill<<<blocks_for(static_cast<std::int64_t>(capacity)), threads_per_block, 0, stream>>>(
      groups.first_order.data(), static_cast<std::int64_t>(capacity), no_order);
  BULKGNN_CUDA_CHECK_LAUNCH();
  hash_items<<<blocks_for(count), threads_per_block, 0, stream>>>(
      keys.data(), count, capacity - 1,
      reinterpret_cast<unsigned long long*>(groups.group_key.data()), groups.group_of_item.data(),
      groups.first_order.data());
  BULKGNN_CUDA_CHECK_LAUNCH();
  return groups;
}

}  // namespace

relabelled_blocks relabel_by_segment(const executor& exec, const segmented_vertices& destinations,
                                     csr_view sampled, relabel_method method) {
  const cudaStream_t stream = stream_of(exec);
  memory_resource& device = exec.memory();
  memory_resource& pinned = exec.device()->pinned_memory();
  const std::int64_t segments = destinations.segments();
  const auto destination_count = static_cast<std::int64_t>(destinations.vertices.size());
  const auto entries = static_cast<std::int64_t>(sampled.indices.size());
  const std::int64_t count = destination_count + entries;

  relabelled_blocks out;
  out.blocks.rows = sampled.rows;
  // The blocks' indptr starts at 0 whatever `sampled`'s starts at.
  out.blocks.indptr = buffer<edge_t>(sampled.indptr.size(), device);
  rebase<<<blocks_for(static_cast<std::int64_t>(sampled.indptr.size())), threads_per_block, 0,
           stream>>>(sampled.indptr.data(), static_cast<std::int64_t>(sampled.indptr.size()),
                     out.blocks.indptr.data());
  BULKGNN_CUDA_CHECK_LAUNCH();
  out.blocks.indices = buffer<vertex_t>(static_cast<std::size_t>(entries), device);
  if (sampled.weighted()) {
    out.blocks.values = buffer<float>(sampled.values.size(), device);
    BULKGNN_CUDA_CHECK(cudaMemcpyAsync(out.blocks.values.data(), sampled.values.data(),
                                       sampled.values.size_bytes(), cudaMemcpyDefault, stream));
  }
  // Offsets stay where the host reads them (pinned; kernels read device
  // copies, device_offsets); the counts behind them are summed on the device.
  buffer<unsigned long long> per_segment(static_cast<std::size_t>(segments), device);
  BULKGNN_CUDA_CHECK(cudaMemsetAsync(per_segment.data(), 0,
                                     per_segment.size() * sizeof(unsigned long long), stream));
  if (count == 0) {
    out.sources.vertices = buffer<vertex_t>(device);
    out.sources.offsets = buffer<std::int64_t>(static_cast<std::size_t>(segments) + 1, 0, pinned);
    return out;
  }

  buffer<std::uint64_t> keys(static_cast<std::size_t>(count), device);
  const device_offsets destination_offsets(exec, destinations.offsets);
  make_items<<<blocks_for(count), threads_per_block, 0, stream>>>(
      destinations.vertices.data(), destination_offsets.data(), segments, destination_count,
      sampled, entries, keys.data());
  BULKGNN_CUDA_CHECK_LAUNCH();
  const item_groups groups =
      method == relabel_method::hash ? group_by_hashing(exec, keys) : group_by_sorting(exec, keys);

  buffer<unsigned long long> unique_count(1, device);
  BULKGNN_CUDA_CHECK(cudaMemsetAsync(unique_count.data(), 0, sizeof(unsigned long long), stream));
  // At most one unique per item.
  buffer<std::uint64_t> unique_keys(static_cast<std::size_t>(count), device);
  buffer<std::int64_t> unique_groups(static_cast<std::size_t>(count), device);
  collect_uniques<<<blocks_for(count), threads_per_block, 0, stream>>>(
      groups.group_of_item.data(), count, groups.group_key.data(), groups.first_order.data(),
      unique_count.data(), unique_keys.data(), unique_groups.data(), per_segment.data());
  BULKGNN_CUDA_CHECK_LAUNCH();
  const auto uniques = static_cast<std::int64_t>(read_back(exec, unique_count.data()));
  buffer<std::uint64_t> sorted_unique_keys(static_cast<std::size_t>(uniques), device);
  buffer<std::int64_t> sorted_groups(static_cast<std::size_t>(uniques), device);
  sort_pairs(exec, unique_keys.data(), sorted_unique_keys.data(), unique_groups.data(),
             sorted_groups.data(), uniques);

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
  buffer<std::int64_t> local_of_group(groups.group_key.size(), device);
  const device_offsets source_offsets(exec, out.sources.offsets);
  number_uniques<<<blocks_for(uniques), threads_per_block, 0, stream>>>(
      sorted_unique_keys.data(), sorted_groups.data(), uniques, groups.group_key.data(),
      source_offsets.data(), local_of_group.data(), out.sources.vertices.data());
  BULKGNN_CUDA_CHECK_LAUNCH();
  if (entries > 0) {
    write_columns<<<blocks_for(entries), threads_per_block, 0, stream>>>(
        groups.group_of_item.data(), destination_count, entries, local_of_group.data(),
        out.blocks.indices.data());
    BULKGNN_CUDA_CHECK_LAUNCH();
  }
  // The scratch buffers above are freed in stream order when this returns.
  return out;
}

}  // namespace bulkgnn::kernels::cuda

// lookup_entries and extract_blocks find vertices in a segment of `cols` by
// binary search in the segment's (vertex, local position) pairs sorted by
// vertex, which a stable radix sort of (segment, vertex) keys gives for all
// segments at once: segment j keeps its range [offsets[j], offsets[j + 1]).
namespace bulkgnn::kernels::cuda {
namespace {

struct segment_index {
  const std::uint64_t* keys;    // (segment, vertex), sorted
  const vertex_t* positions;    // local position of each key's vertex
  const std::int64_t* offsets;  // the segments' ranges
  std::int64_t segments;

  // The local position of `vertex` in segment j, or -1.
  __device__ vertex_t find(std::int64_t j, vertex_t vertex) const {
    const std::uint64_t key =
        (static_cast<std::uint64_t>(j) << 32) | static_cast<std::uint32_t>(vertex);
    std::int64_t low = offsets[j];
    std::int64_t high = offsets[j + 1];
    while (low < high) {
      const std::int64_t middle = (low + high) / 2;
      if (keys[middle] < key)
        low = middle + 1;
      else
        high = middle;
    }
    return low < offsets[j + 1] && keys[low] == key ? positions[low] : -1;
  }
};

__global__ void segment_items(const vertex_t* vertices, const std::int64_t* offsets,
                              std::int64_t segments, std::int64_t count, std::uint64_t* keys,
                              std::int64_t* items) {
  const std::int64_t i = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x;
  if (i >= count) return;
  keys[i] = segment_vertex_key(offsets, segments, i, vertices[i]);
  items[i] = i;
}

__global__ void local_positions(const std::int64_t* sorted_items, const std::uint64_t* sorted_keys,
                                const std::int64_t* offsets, std::int64_t count,
                                vertex_t* positions) {
  const std::int64_t i = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x;
  if (i < count)
    positions[i] = static_cast<vertex_t>(sorted_items[i] - offsets[sorted_keys[i] >> 32]);
}

// Owns the arrays behind a segment_index.
struct segment_lookup {
  device_offsets offsets;
  buffer<std::uint64_t> keys;
  buffer<vertex_t> positions;
  segment_index index;
};

segment_lookup index_segments(const executor& exec, const segmented_vertices& cols) {
  const cudaStream_t stream = stream_of(exec);
  const auto count = static_cast<std::int64_t>(cols.vertices.size());
  segment_lookup lookup{device_offsets(exec, cols.offsets),
                        buffer<std::uint64_t>(cols.vertices.size(), exec.memory()),
                        buffer<vertex_t>(cols.vertices.size(), exec.memory()),
                        {}};
  lookup.index = {lookup.keys.data(), lookup.positions.data(), lookup.offsets.data(),
                  cols.segments()};
  if (count == 0) return lookup;
  buffer<std::uint64_t> keys(cols.vertices.size(), exec.memory());
  buffer<std::int64_t> items(cols.vertices.size(), exec.memory());
  buffer<std::int64_t> sorted_items(cols.vertices.size(), exec.memory());
  segment_items<<<blocks_for(count), threads_per_block, 0, stream>>>(
      cols.vertices.data(), lookup.offsets.data(), cols.segments(), count, keys.data(),
      items.data());
  BULKGNN_CUDA_CHECK_LAUNCH();
  sort_pairs(exec, keys.data(), lookup.keys.data(), items.data(), sorted_items.data(), count);
  local_positions<<<blocks_for(count), threads_per_block, 0, stream>>>(
      sorted_items.data(), lookup.keys.data(), lookup.offsets.data(), count,
      lookup.positions.data());
  BULKGNN_CUDA_CHECK_LAUNCH();
  return lookup;
}

__global__ void look_up(csr_view a, const vertex_t* rows, const vertex_t* vertices,
                        const std::int64_t* offsets, std::int64_t segments, std::int64_t count,
                        float* out) {
  const std::int64_t k = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x;
  if (k >= count) return;
  const vertex_t row = rows[last_offset_at_or_below(offsets, segments + 1, k)];
  edge_t low = a.first_entry(row);
  const edge_t end = a.end_entry(row);
  edge_t high = end;
  while (low < high) {
    const edge_t middle = (low + high) / 2;
    if (a.column_at(middle) < vertices[k])
      low = middle + 1;
    else
      high = middle;
  }
  const bool found = low < end && a.column_at(low) == vertices[k];
  out[k] = found ? a.value_at(low) : 0.0f;
}

struct block_source {
  csr_view a;
  const vertex_t* row_vertices;
  const std::int64_t* row_offsets;
  std::int64_t row_segments;
  std::int64_t rows;
  const float* scale;
  bool add_self_loops;
};

// Visits output row i's entries in a's stored order, then its added self
// loop: (local column, value).
template <class Visit>
__device__ void for_each_block_entry(const block_source& s, const segment_index& cols,
                                     std::int64_t i, Visit&& visit) {
  const vertex_t u = s.row_vertices[i];
  const std::int64_t j = last_offset_at_or_below(s.row_offsets, s.row_segments + 1, i);
  bool stores_self = false;
  for (edge_t e = s.a.first_entry(u); e < s.a.end_entry(u); ++e) {
    const vertex_t column = s.a.column_at(e);
    stores_self |= column == u;
    const vertex_t p = cols.find(j, column);
    if (p < 0) continue;
    visit(p, __fmul_rn(s.a.value_at(e), s.scale[cols.offsets[j] + p]));
  }
  if (!s.add_self_loops || stores_self) return;
  const vertex_t p = cols.find(j, u);
  if (p >= 0) visit(p, __fmul_rn(1.0f, s.scale[cols.offsets[j] + p]));
}

__global__ void count_block_entries(block_source s, segment_index cols, edge_t* lengths) {
  const std::int64_t i = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x;
  if (i >= s.rows) return;
  edge_t length = 0;
  for_each_block_entry(s, cols, i, [&](vertex_t, float) { ++length; });
  lengths[i + 1] = length;
  if (i == 0) lengths[0] = 0;
}

__global__ void write_block_entries(block_source s, segment_index cols, const edge_t* indptr,
                                    std::uint64_t* keys, float* values) {
  const std::int64_t i = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x;
  if (i >= s.rows) return;
  edge_t at = indptr[i];
  for_each_block_entry(s, cols, i, [&](vertex_t p, float value) {
    keys[at] = (static_cast<std::uint64_t>(i) << 32) | static_cast<std::uint32_t>(p);
    values[at] = value;
    ++at;
  });
}

__global__ void low_words(const std::uint64_t* keys, std::int64_t count, vertex_t* columns) {
  const std::int64_t e = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x;
  if (e < count) columns[e] = static_cast<vertex_t>(keys[e] & 0xFFFFFFFFu);
}

}  // namespace

buffer<float> lookup_entries(const executor& exec, csr_view a, std::span<const vertex_t> rows,
                             const segmented_vertices& cols) {
  const auto count = static_cast<std::int64_t>(cols.vertices.size());
  buffer<float> out(cols.vertices.size(), exec.memory());
  if (count == 0) return out;
  const device_offsets offsets(exec, cols.offsets);
  look_up<<<blocks_for(count), threads_per_block, 0, stream_of(exec)>>>(
      a, rows.data(), cols.vertices.data(), offsets.data(), cols.segments(), count, out.data());
  BULKGNN_CUDA_CHECK_LAUNCH();
  return out;
}

csr_matrix extract_blocks(const executor& exec, csr_view a, const segmented_vertices& rows,
                          const segmented_vertices& cols, std::span<const float> column_scale,
                          bool add_self_loops) {
  const cudaStream_t stream = stream_of(exec);
  memory_resource& device = exec.memory();
  const auto row_count = static_cast<std::int64_t>(rows.vertices.size());
  csr_matrix out;
  out.rows = row_count;
  for (std::int64_t j = 0; j < cols.segments(); ++j) out.cols = std::max(out.cols, cols.size(j));
  out.indptr = buffer<edge_t>(static_cast<std::size_t>(row_count) + 1, device);
  BULKGNN_CUDA_CHECK(cudaMemsetAsync(out.indptr.data(), 0, sizeof(edge_t), stream));
  if (row_count == 0) return out;
  const auto lookup = index_segments(exec, cols);
  const device_offsets row_offsets(exec, rows.offsets);
  const block_source source{a,         rows.vertices.data(), row_offsets.data(), rows.segments(),
                            row_count, column_scale.data(),  add_self_loops};
  count_block_entries<<<blocks_for(row_count), threads_per_block, 0, stream>>>(source, lookup.index,
                                                                               out.indptr.data());
  BULKGNN_CUDA_CHECK_LAUNCH();
  inclusive_scan(exec, out.indptr.data() + 1, row_count);
  const edge_t entries = read_back(exec, out.indptr.data() + row_count);
  buffer<std::uint64_t> keys(static_cast<std::size_t>(entries), device);
  buffer<float> values(static_cast<std::size_t>(entries), device);
  write_block_entries<<<blocks_for(row_count), threads_per_block, 0, stream>>>(
      source, lookup.index, out.indptr.data(), keys.data(), values.data());
  BULKGNN_CUDA_CHECK_LAUNCH();
  // Stable by (row, local column): repeated columns keep a's order and the
  // added self loop, written last, stays last, as the host's (column,
  // position) sort leaves them.
  buffer<std::uint64_t> sorted_keys(keys.size(), device);
  out.values = buffer<float>(values.size(), device);
  out.indices = buffer<vertex_t>(keys.size(), device);
  if (entries == 0) return out;
  const int end_bit = row_key_bits(row_count);
  std::size_t bytes = 0;
  BULKGNN_CUDA_CHECK(cub::DeviceRadixSort::SortPairs(
      nullptr, bytes, keys.data(), sorted_keys.data(), values.data(), out.values.data(), entries, 0,
      end_bit, stream));
  buffer<std::byte> scratch(bytes, device);
  BULKGNN_CUDA_CHECK(cub::DeviceRadixSort::SortPairs(
      scratch.data(), bytes, keys.data(), sorted_keys.data(), values.data(), out.values.data(),
      entries, 0, end_bit, stream));
  low_words<<<blocks_for(entries), threads_per_block, 0, stream>>>(sorted_keys.data(), entries,
                                                                   out.indices.data());
  BULKGNN_CUDA_CHECK_LAUNCH();
  return out;
}

}  // namespace bulkgnn::kernels::cuda

namespace bulkgnn::kernels::cuda {
namespace {

// Entry e of a row of segment j: column c becomes sources' vertex c of
// segment j.
__global__ void to_vertices(const edge_t* indptr, std::int64_t rows, const vertex_t* local,
                            const std::int64_t* row_offsets, std::int64_t segments,
                            const vertex_t* source_vertices, const std::int64_t* source_offsets,
                            vertex_t* out) {
  const std::int64_t e = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x;
  const edge_t base = indptr[0];
  if (e >= indptr[rows] - base) return;
  const std::int64_t row = last_offset_at_or_below(indptr, rows + 1, base + e);
  const std::int64_t j = last_offset_at_or_below(row_offsets, segments + 1, row);
  out[e] = source_vertices[source_offsets[j] + local[e]];
}

}  // namespace

csr_matrix columns_as_vertices(const executor& exec, csr_view blocks,
                               std::span<const std::int64_t> row_offsets,
                               const segmented_vertices& sources, std::int64_t num_vertices) {
  const cudaStream_t stream = stream_of(exec);
  const auto entries = static_cast<std::int64_t>(blocks.indices.size());
  csr_matrix out;
  out.rows = blocks.rows;
  out.cols = num_vertices;
  out.indptr = buffer<edge_t>(blocks.indptr.size(), exec.memory());
  BULKGNN_CUDA_CHECK(cudaMemcpyAsync(out.indptr.data(), blocks.indptr.data(),
                                     blocks.indptr.size_bytes(), cudaMemcpyDefault, stream));
  out.values = buffer<float>(blocks.values.size(), exec.memory());
  if (!blocks.values.empty())
    BULKGNN_CUDA_CHECK(cudaMemcpyAsync(out.values.data(), blocks.values.data(),
                                       blocks.values.size_bytes(), cudaMemcpyDefault, stream));
  out.indices = buffer<vertex_t>(blocks.indices.size(), exec.memory());
  if (entries == 0) return out;
  const device_offsets row_offsets_there(exec, row_offsets);
  const device_offsets source_offsets(exec, sources.offsets);
  to_vertices<<<blocks_for(entries), threads_per_block, 0, stream>>>(
      blocks.indptr.data(), blocks.rows, blocks.indices.data(), row_offsets_there.data(),
      static_cast<std::int64_t>(row_offsets.size()) - 1, sources.vertices.data(),
      source_offsets.data(), out.indices.data());
  BULKGNN_CUDA_CHECK_LAUNCH();
  return out;
}

}  // namespace bulkgnn::kernels::cuda
