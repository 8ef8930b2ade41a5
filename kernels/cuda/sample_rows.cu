#include "bulkgnn/kernels/rules/row_draws.hpp"
#include "kernels.hpp"
#include "launch.cuh"

#include <cub/device/device_scan.cuh>

#include <string>

namespace bulkgnn::kernels::cuda {
namespace {

// What one thread needs to draw one output row (kernel arguments by value).
struct row_draw {
  csr_view graph;
  const vertex_t* rows;
  std::int64_t count;
  const std::uint32_t* minibatch_of_row;
  const vertex_t* key_rows;  // null: key by the sampled row
  std::uint32_t seed;
  std::uint32_t epoch;
  std::uint32_t layer;
  std::int64_t fanout;
  bool with_replacement;
  bool by_value;

  __device__ bool takes_whole_row(std::uint32_t degree) const {
    return fanout == -1 || degree == 0 || (!with_replacement && degree <= fanout);
  }
};

__global__ void count_entries(row_draw p, edge_t* counts, int* bad_row) {
  const std::int64_t i = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x;
  if (i >= p.count) return;
  const vertex_t row = p.rows[i];
  if (row < 0 || row >= p.graph.rows) {
    atomicExch(bad_row, 1);
    counts[i] = 0;
    return;
  }
  const auto degree = static_cast<std::uint32_t>(p.graph.end_entry(row) - p.graph.first_entry(row));
  counts[i] = p.takes_whole_row(degree) ? degree : p.fanout;
}

// One thread per output row: positions first (in the output's slots), then
// the entries they point at.
__global__ void draw_rows(row_draw p, const edge_t* out_indptr, vertex_t* out_indices,
                          float* out_values, double* scratch) {
  const std::int64_t i = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x;
  if (i >= p.count) return;
  const vertex_t row = p.rows[i];
  const edge_t begin = p.graph.first_entry(row);
  const auto degree = static_cast<std::uint32_t>(p.graph.end_entry(row) - begin);
  const edge_t first = out_indptr[i];
  const auto drawn = static_cast<std::uint32_t>(out_indptr[i + 1] - first);
  if (p.takes_whole_row(degree)) {
    for (std::uint32_t e = 0; e < degree; ++e) {
      out_indices[first + e] = p.graph.column_at(begin + e);
      if (p.graph.weighted()) out_values[first + e] = p.graph.value_at(begin + e);
    }
    return;
  }
  const auto key_row = static_cast<std::uint32_t>(p.key_rows ? p.key_rows[i] : row);
  philox_stream rng(rng_key{p.seed, p.epoch, p.minibatch_of_row[i], p.layer, key_row});
  auto* positions = reinterpret_cast<std::uint32_t*>(out_indices + first);
  const float* weights = p.graph.weighted() ? p.graph.values.data() + begin : nullptr;
  if (p.with_replacement && p.by_value)
    rules::weighted_positions(rng, weights, degree, drawn, scratch + first, positions);
  else if (p.with_replacement)
    rules::uniform_positions(rng, degree, drawn, positions);
  else if (p.by_value)
    rules::smallest_key_positions(rng, weights, degree, drawn, scratch + first, positions);
  else
    rules::floyd_positions(rng, degree, drawn, positions);
  for (std::uint32_t k = 0; k < drawn; ++k) {
    const std::uint32_t position = positions[k];
    if (p.graph.weighted()) out_values[first + k] = p.graph.value_at(begin + position);
    out_indices[first + k] = p.graph.column_at(begin + position);
  }
}

}  // namespace

csr_matrix sample_rows(const executor& exec, csr_view a, std::span<const vertex_t> rows,
                       const row_streams& streams, const row_sampling_options& options) {
  const cudaStream_t stream = stream_of(exec);
  const auto count = static_cast<std::int64_t>(rows.size());
  const row_draw p{.graph = a,
                   .rows = rows.data(),
                   .count = count,
                   .minibatch_of_row = streams.minibatch_of_row.data(),
                   .key_rows = streams.key_rows.empty() ? nullptr : streams.key_rows.data(),
                   .seed = streams.seed,
                   .epoch = streams.epoch,
                   .layer = streams.layer,
                   .fanout = options.fanout,
                   .with_replacement = options.mode == replacement::with,
                   .by_value = options.weights == weighting::by_value && a.weighted()};
  csr_matrix out;
  out.rows = count;
  out.cols = a.cols;
  out.indptr = buffer<edge_t>(static_cast<std::size_t>(count) + 1, exec.memory());
  BULKGNN_CUDA_CHECK(cudaMemsetAsync(out.indptr.data(), 0, sizeof(edge_t), stream));
  auto bad_row = device_flag(exec);
  if (count > 0) {
    count_entries<<<blocks_for(count), threads_per_block, 0, stream>>>(p, out.indptr.data() + 1,
                                                                       bad_row.data());
    BULKGNN_CUDA_CHECK_LAUNCH();
    std::size_t scratch_bytes = 0;
    BULKGNN_CUDA_CHECK(cub::DeviceScan::InclusiveSum(nullptr, scratch_bytes, out.indptr.data() + 1,
                                                     out.indptr.data() + 1, count, stream));
    buffer<std::byte> scan_scratch(scratch_bytes, exec.memory());
    BULKGNN_CUDA_CHECK(cub::DeviceScan::InclusiveSum(scan_scratch.data(), scratch_bytes,
                                                     out.indptr.data() + 1, out.indptr.data() + 1,
                                                     count, stream));
  }
  if (read_back(exec, bad_row.data()) != 0)
    throw_argument_error(
        ("sample_rows: rows holds a vertex outside [0, " + std::to_string(a.rows) + ")").c_str());
  const edge_t total = read_back(exec, out.indptr.data() + count);
  out.indices = buffer<vertex_t>(static_cast<std::size_t>(total), exec.memory());
  if (a.weighted()) out.values = buffer<float>(static_cast<std::size_t>(total), exec.memory());
  buffer<double> draw_scratch(p.by_value ? static_cast<std::size_t>(total) : 0, exec.memory());
  if (count > 0) {
    draw_rows<<<blocks_for(count), threads_per_block, 0, stream>>>(
        p, out.indptr.data(), out.indices.data(), out.values.data(), draw_scratch.data());
    BULKGNN_CUDA_CHECK_LAUNCH();
  }
  return out;
}

}  // namespace bulkgnn::kernels::cuda
