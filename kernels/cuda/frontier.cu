#include "kernels.hpp"
#include "launch.cuh"
#include "primitives.cuh"

#include <cub/device/device_radix_sort.cuh>
#include <cub/device/device_select.cuh>

#include <string>

namespace bulkgnn::kernels::cuda {
namespace {

__global__ void repeat_values(const std::int64_t* offsets, std::int64_t segments,
                              const std::uint32_t* values, std::uint32_t* out, std::int64_t count) {
  const std::int64_t i = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x;
  if (i < count) out[i] = values[last_offset_at_or_below(offsets, segments + 1, i)];
}

}  // namespace

buffer<std::uint32_t> repeat_per_segment(const executor& exec,
                                         std::span<const std::int64_t> offsets,
                                         std::span<const std::uint32_t> values) {
  const std::int64_t count = offsets.back();
  buffer<std::uint32_t> out(static_cast<std::size_t>(count), exec.memory());
  if (count == 0) return out;
  const device_offsets offsets_there(exec, offsets);
  repeat_values<<<blocks_for(count), threads_per_block, 0, stream_of(exec)>>>(
      offsets_there.data(), static_cast<std::int64_t>(values.size()), values.data(), out.data(),
      count);
  BULKGNN_CUDA_CHECK_LAUNCH();
  return out;
}

}  // namespace bulkgnn::kernels::cuda

namespace bulkgnn::kernels::cuda {
namespace {

// The position of `value` in sorted[0, count): the first not below it.
__device__ std::int64_t lower_bound_of(const vertex_t* sorted, std::int64_t count, vertex_t value) {
  std::int64_t low = 0;
  std::int64_t high = count;
  while (low < high) {
    const std::int64_t middle = (low + high) / 2;
    if (sorted[middle] < value)
      low = middle + 1;
    else
      high = middle;
  }
  return low;
}

__global__ void segment_vertex_keys(const vertex_t* vertices, const std::int64_t* offsets,
                                    std::int64_t segments, std::int64_t count,
                                    std::uint64_t* keys) {
  const std::int64_t i = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x;
  if (i < count) keys[i] = segment_vertex_key(offsets, segments, i, vertices[i]);
}

// Q's entry for the frontier vertex held by sorted key i: 1 / (deg + 1)²,
// each operation rounded as the host rounds it.
__global__ void selection_entries(const std::uint64_t* sorted_keys, std::int64_t count,
                                  const vertex_t* distinct, std::int64_t distinct_count,
                                  const vertex_t* row_of, const edge_t* indptr,
                                  vertex_t* out_indices, float* out_values) {
  const std::int64_t i = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x;
  if (i >= count) return;
  const auto vertex = static_cast<vertex_t>(sorted_keys[i] & 0xFFFFFFFFu);
  const vertex_t row = row_of[lower_bound_of(distinct, distinct_count, vertex)];
  const double degree = __dadd_rn(static_cast<double>(indptr[row + 1] - indptr[row]), 1.0);
  out_indices[i] = vertex;
  out_values[i] = __double2float_rn(__ddiv_rn(1.0, __dmul_rn(degree, degree)));
}

__global__ void rename(const vertex_t* columns, std::int64_t count, const vertex_t* sorted_keys,
                       std::int64_t keys, const vertex_t* mapped, vertex_t* out) {
  const std::int64_t e = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x;
  if (e < count) out[e] = mapped[lower_bound_of(sorted_keys, keys, columns[e])];
}

__global__ void find_positions(const vertex_t* values, std::int64_t count, const vertex_t* sorted,
                               std::int64_t sorted_count, vertex_t* out) {
  const std::int64_t i = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x;
  if (i < count) out[i] = static_cast<vertex_t>(lower_bound_of(sorted, sorted_count, values[i]));
}

// Output row r's length: row j of per_segment where r starts segment j
// (segments are non-empty), else 0.
__global__ void spread_lengths(const edge_t* indptr, const std::int64_t* offsets,
                               std::int64_t segments, std::int64_t rows, edge_t* lengths) {
  const std::int64_t r = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x;
  if (r >= rows) return;
  const std::int64_t j = last_offset_at_or_below(offsets, segments + 1, r);
  lengths[r + 1] = offsets[j] == r ? indptr[j + 1] - indptr[j] : 0;
  if (r == 0) lengths[0] = 0;
}

__global__ void invert(float* values, std::int64_t count, int* bad_value) {
  const std::int64_t i = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x;
  if (i >= count) return;
  if (!(values[i] > 0.0f && isfinite(values[i]))) atomicExch(bad_value, 1);
  values[i] = __fdiv_rn(1.0f, values[i]);
}

// Row i of with_self_loops: the row's entries and, where it lacks it, the
// loop. A thread per row, as the host back ends' loop body.
struct looped_rows {
  csr_view rows;
  const vertex_t* row_of;
  const vertex_t* vertices;
  std::int64_t count;

  __device__ bool in_range(std::int64_t i) const {
    return row_of[i] >= 0 && row_of[i] < rows.rows && vertices[i] >= 0 && vertices[i] < rows.cols;
  }
  __device__ bool has_loop(std::int64_t i) const {
    for (edge_t e = rows.first_entry(row_of[i]); e < rows.end_entry(row_of[i]); ++e)
      if (rows.column_at(e) == vertices[i]) return true;
    return false;
  }
};

__global__ void looped_lengths(looped_rows p, edge_t* lengths, int* bad_vertex) {
  const std::int64_t i = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x;
  if (i >= p.count) return;
  if (!p.in_range(i)) {
    atomicExch(bad_vertex, 1);
    lengths[i] = 0;
    return;
  }
  const edge_t degree = p.rows.end_entry(p.row_of[i]) - p.rows.first_entry(p.row_of[i]);
  lengths[i] = degree + (p.has_loop(i) ? 0 : 1);
}

__global__ void write_looped_rows(looped_rows p, const edge_t* out_indptr, vertex_t* out_indices) {
  const std::int64_t i = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x;
  if (i >= p.count) return;
  edge_t at = out_indptr[i];
  for (edge_t e = p.rows.first_entry(p.row_of[i]); e < p.rows.end_entry(p.row_of[i]); ++e)
    out_indices[at++] = p.rows.column_at(e);
  if (at != out_indptr[i + 1]) out_indices[at] = p.vertices[i];
}

buffer<std::uint64_t> sorted_segment_keys(const executor& exec,
                                          const segmented_vertices& vertices) {
  const auto count = static_cast<std::int64_t>(vertices.vertices.size());
  buffer<std::uint64_t> keys(vertices.vertices.size(), exec.memory());
  buffer<std::uint64_t> sorted(vertices.vertices.size(), exec.memory());
  if (count == 0) return sorted;
  const device_offsets offsets(exec, vertices.offsets);
  segment_vertex_keys<<<blocks_for(count), threads_per_block, 0, stream_of(exec)>>>(
      vertices.vertices.data(), offsets.data(), vertices.segments(), count, keys.data());
  BULKGNN_CUDA_CHECK_LAUNCH();
  std::size_t bytes = 0;
  BULKGNN_CUDA_CHECK(cub::DeviceRadixSort::SortKeys(nullptr, bytes, keys.data(), sorted.data(),
                                                    count, 0, 64, stream_of(exec)));
  buffer<std::byte> scratch(bytes, exec.memory());
  BULKGNN_CUDA_CHECK(cub::DeviceRadixSort::SortKeys(scratch.data(), bytes, keys.data(),
                                                    sorted.data(), count, 0, 64, stream_of(exec)));
  return sorted;
}

buffer<edge_t> device_copy(const executor& exec, std::span<const edge_t> values) {
  buffer<edge_t> out(values.size(), exec.memory());
  if (!values.empty())
    BULKGNN_CUDA_CHECK(cudaMemcpyAsync(out.data(), values.data(), values.size_bytes(),
                                       cudaMemcpyDefault, stream_of(exec)));
  return out;
}

}  // namespace

buffer<vertex_t> sorted_distinct(const executor& exec, std::span<const vertex_t> vertices) {
  const auto count = static_cast<std::int64_t>(vertices.size());
  buffer<vertex_t> sorted(vertices.size(), exec.memory());
  if (count == 0) return sorted;
  const cudaStream_t stream = stream_of(exec);
  std::size_t bytes = 0;
  BULKGNN_CUDA_CHECK(cub::DeviceRadixSort::SortKeys(nullptr, bytes, vertices.data(), sorted.data(),
                                                    count, 0, 32, stream));
  buffer<std::byte> sort_scratch(bytes, exec.memory());
  BULKGNN_CUDA_CHECK(cub::DeviceRadixSort::SortKeys(sort_scratch.data(), bytes, vertices.data(),
                                                    sorted.data(), count, 0, 32, stream));
  buffer<vertex_t> distinct(vertices.size(), exec.memory());
  buffer<std::int64_t> selected(1, exec.memory());
  bytes = 0;
  BULKGNN_CUDA_CHECK(cub::DeviceSelect::Unique(nullptr, bytes, sorted.data(), distinct.data(),
                                               selected.data(), count, stream));
  buffer<std::byte> select_scratch(bytes, exec.memory());
  BULKGNN_CUDA_CHECK(cub::DeviceSelect::Unique(select_scratch.data(), bytes, sorted.data(),
                                               distinct.data(), selected.data(), count, stream));
  distinct.resize(static_cast<std::size_t>(read_back(exec, selected.data())));
  return distinct;
}

buffer<vertex_t> positions_in_sorted(const executor& exec, std::span<const vertex_t> values,
                                     std::span<const vertex_t> sorted) {
  const auto count = static_cast<std::int64_t>(values.size());
  buffer<vertex_t> positions(values.size(), exec.memory());
  if (count == 0) return positions;
  find_positions<<<blocks_for(count), threads_per_block, 0, stream_of(exec)>>>(
      values.data(), count, sorted.data(), static_cast<std::int64_t>(sorted.size()),
      positions.data());
  BULKGNN_CUDA_CHECK_LAUNCH();
  return positions;
}

csr_matrix frontier_selection(const executor& exec, const segmented_vertices& frontier,
                              std::span<const vertex_t> distinct, csr_view rows,
                              std::span<const vertex_t> row_of, std::int64_t num_vertices) {
  const auto count = static_cast<std::int64_t>(frontier.vertices.size());
  csr_matrix q;
  q.rows = frontier.segments();
  q.cols = num_vertices;
  q.indptr = device_copy(exec, frontier.offsets);
  q.indices = buffer<vertex_t>(frontier.vertices.size(), exec.memory());
  q.values = buffer<float>(frontier.vertices.size(), exec.memory());
  if (count == 0) return q;
  // Sorting by (segment, vertex) sorts each row of Q by column.
  const auto keys = sorted_segment_keys(exec, frontier);
  selection_entries<<<blocks_for(count), threads_per_block, 0, stream_of(exec)>>>(
      keys.data(), count, distinct.data(), static_cast<std::int64_t>(distinct.size()),
      row_of.data(), rows.indptr.data(), q.indices.data(), q.values.data());
  BULKGNN_CUDA_CHECK_LAUNCH();
  return q;
}

csr_matrix rename_columns(const executor& exec, csr_view m, std::span<const vertex_t> sorted_keys,
                          std::span<const vertex_t> mapped, std::int64_t cols) {
  const cudaStream_t stream = stream_of(exec);
  const auto count = static_cast<std::int64_t>(m.indices.size());
  csr_matrix out;
  out.rows = m.rows;
  out.cols = cols;
  out.indptr = device_copy(exec, m.indptr);
  out.indices = buffer<vertex_t>(m.indices.size(), exec.memory());
  out.values = buffer<float>(m.values.size(), exec.memory());
  if (!m.values.empty())
    BULKGNN_CUDA_CHECK(cudaMemcpyAsync(out.values.data(), m.values.data(), m.values.size_bytes(),
                                       cudaMemcpyDefault, stream));
  if (count == 0) return out;
  rename<<<blocks_for(count), threads_per_block, 0, stream>>>(
      m.indices.data(), count, sorted_keys.data(), static_cast<std::int64_t>(sorted_keys.size()),
      mapped.data(), out.indices.data());
  BULKGNN_CUDA_CHECK_LAUNCH();
  return out;
}

csr_matrix spread_to_segment_starts(const executor& exec, csr_view per_segment,
                                    std::span<const std::int64_t> offsets) {
  const cudaStream_t stream = stream_of(exec);
  csr_matrix out;
  out.rows = offsets.back();
  out.cols = per_segment.cols;
  out.indptr = buffer<edge_t>(static_cast<std::size_t>(out.rows) + 1, exec.memory());
  out.indices = buffer<vertex_t>(per_segment.indices.size(), exec.memory());
  if (!per_segment.indices.empty())
    BULKGNN_CUDA_CHECK(cudaMemcpyAsync(out.indices.data(), per_segment.indices.data(),
                                       per_segment.indices.size_bytes(), cudaMemcpyDefault,
                                       stream));
  BULKGNN_CUDA_CHECK(cudaMemsetAsync(out.indptr.data(), 0, sizeof(edge_t), stream));
  if (out.rows == 0) return out;
  const device_offsets offsets_there(exec, offsets);
  spread_lengths<<<blocks_for(out.rows), threads_per_block, 0, stream>>>(
      per_segment.indptr.data(), offsets_there.data(), per_segment.rows, out.rows,
      out.indptr.data());
  BULKGNN_CUDA_CHECK_LAUNCH();
  inclusive_scan(exec, out.indptr.data() + 1, out.rows);
  return out;
}

void invert_probabilities(const executor& exec, std::span<float> values) {
  const auto count = static_cast<std::int64_t>(values.size());
  if (count == 0) return;
  auto bad_value = device_flag(exec);
  invert<<<blocks_for(count), threads_per_block, 0, stream_of(exec)>>>(values.data(), count,
                                                                       bad_value.data());
  BULKGNN_CUDA_CHECK_LAUNCH();
  if (read_back(exec, bad_value.data()) != 0)
    throw_argument_error(
        "invert_probabilities: values holds one that is not a positive probability");
}

csr_matrix with_self_loops(const executor& exec, csr_view rows, std::span<const vertex_t> row_of,
                           std::span<const vertex_t> vertices) {
  const cudaStream_t stream = stream_of(exec);
  const auto count = static_cast<std::int64_t>(row_of.size());
  const looped_rows p{
      .rows = rows, .row_of = row_of.data(), .vertices = vertices.data(), .count = count};
  csr_matrix out;
  out.rows = count;
  out.cols = rows.cols;
  out.indptr = buffer<edge_t>(static_cast<std::size_t>(count) + 1, exec.memory());
  BULKGNN_CUDA_CHECK(cudaMemsetAsync(out.indptr.data(), 0, sizeof(edge_t), stream));
  auto bad_vertex = device_flag(exec);
  if (count > 0) {
    looped_lengths<<<blocks_for(count), threads_per_block, 0, stream>>>(p, out.indptr.data() + 1,
                                                                        bad_vertex.data());
    BULKGNN_CUDA_CHECK_LAUNCH();
    inclusive_scan(exec, out.indptr.data() + 1, count);
  }
  if (read_back(exec, bad_vertex.data()) != 0)
    throw_argument_error(("with_self_loops: a row_of entry is outside [0, " +
                          std::to_string(rows.rows) + ") or a vertex outside [0, " +
                          std::to_string(rows.cols) + ")")
                             .c_str());
  out.indices = buffer<vertex_t>(
      static_cast<std::size_t>(read_back(exec, out.indptr.data() + count)), exec.memory());
  if (count > 0) {
    write_looped_rows<<<blocks_for(count), threads_per_block, 0, stream>>>(p, out.indptr.data(),
                                                                           out.indices.data());
    BULKGNN_CUDA_CHECK_LAUNCH();
  }
  return out;
}

}  // namespace bulkgnn::kernels::cuda
