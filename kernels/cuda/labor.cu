#include "bulkgnn/kernels/rules/labor_importance.hpp"
#include "kernels.hpp"
#include "launch.cuh"
#include "primitives.cuh"

#include <limits>
#include <string>

// LABOR's draws (sample_rows.hpp): one thread per candidate entry (the
// frontier rows' entries laid end to end) rather than per row, so that a
// hub's row is spread over many threads. Every decision is the host back
// ends' (the shared variates, rules/labor_importance.hpp's scalar rules in
// the same double arithmetic); only LABOR-i's per-minibatch sums run in a
// fixed order, one thread per minibatch, as on the host.
namespace bulkgnn::kernels::cuda {
namespace {

// The entries of the rows rows[0, count) of `graph`, laid end to end: row i's
// are [entry_offsets[i], entry_offsets[i + 1]).
struct frontier_entries {
  csr_view graph;
  const vertex_t* rows;
  std::int64_t count;
  const std::int64_t* entry_offsets;  // device memory

  __device__ std::int64_t row_of_entry(std::int64_t e) const {
    return last_offset_at_or_below(entry_offsets, count, e);
  }
  __device__ std::int64_t degree(std::int64_t i) const {
    return entry_offsets[i + 1] - entry_offsets[i];
  }
  __device__ vertex_t column_of_entry(std::int64_t i, std::int64_t e) const {
    return graph.column_at(graph.first_entry(rows[i]) + (e - entry_offsets[i]));
  }
};

__global__ void row_degrees(frontier_entries f, std::int64_t* degrees, int* bad_row) {
  const std::int64_t i = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x;
  if (i >= f.count) return;
  const vertex_t row = f.rows[i];
  if (row < 0 || row >= f.graph.rows) {
    atomicExch(bad_row, 1);
    degrees[i] = 0;
    return;
  }
  degrees[i] = f.graph.end_entry(row) - f.graph.first_entry(row);
}

// The offsets of the rows' entries (rows checked against the graph) and
// their count.
std::int64_t lay_out_entries(const executor& exec, frontier_entries& f,
                             buffer<std::int64_t>& entry_offsets, const char* function) {
  const cudaStream_t stream = stream_of(exec);
  entry_offsets = buffer<std::int64_t>(static_cast<std::size_t>(f.count) + 1, exec.memory());
  f.entry_offsets = entry_offsets.data();
  BULKGNN_CUDA_CHECK(cudaMemsetAsync(entry_offsets.data(), 0, sizeof(std::int64_t), stream));
  auto bad_row = device_flag(exec);
  if (f.count > 0) {
    row_degrees<<<blocks_for(f.count), threads_per_block, 0, stream>>>(f, entry_offsets.data() + 1,
                                                                       bad_row.data());
    BULKGNN_CUDA_CHECK_LAUNCH();
    inclusive_scan(exec, entry_offsets.data() + 1, f.count);
  }
  if (read_back(exec, bad_row.data()) != 0)
    throw_argument_error((std::string(function) + ": rows holds a vertex outside [0, " +
                          std::to_string(f.graph.rows) + ")")
                             .c_str());
  return read_back(exec, entry_offsets.data() + f.count);
}

// The shared variate of each entry's column: the stream of its row's
// minibatch and the hop's layer, with the column in place of the row.
struct column_variates {
  frontier_entries f;
  const std::uint32_t* minibatch_of_row;
  std::uint32_t seed;
  std::uint32_t epoch;
  std::uint32_t layer;

  __device__ double of(std::int64_t i, std::int64_t e) const {
    return shared_variate(rng_key{seed, epoch, minibatch_of_row[i], layer, 0},
                          f.column_of_entry(i, e));
  }
};

// LABOR-0: entry e of row i is kept iff its column's variate is below
// fanout / degree.
struct shared_variate_draw {
  column_variates variates;
  std::int64_t fanout;

  __device__ const frontier_entries& entries() const { return variates.f; }
  __device__ bool keeps(std::int64_t i, std::int64_t e) const {
    const double threshold =
        static_cast<double>(fanout) / static_cast<double>(variates.f.degree(i));
    return threshold >= 1 || variates.of(i, e) < threshold;
  }
  __device__ float value(std::int64_t, std::int64_t) const { return 1.0f; }
};

// LABOR-i: each entry's column numbered within its minibatch (`local`, the
// minibatch's columns in order of first appearance, numbered on from the
// previous minibatch's), the columns' importances and the rows' scales.
struct importance_draw {
  column_variates variates;
  std::int64_t fanout;
  const std::int64_t* local;
  const double* importance;
  const double* scale;

  __device__ const frontier_entries& entries() const { return variates.f; }
  __device__ bool whole(std::int64_t i) const { return variates.f.degree(i) <= fanout; }
  __device__ double importance_of(std::int64_t e) const { return importance[local[e]]; }
  __device__ bool keeps(std::int64_t i, std::int64_t e) const {
    return whole(i) || rules::labor_keeps(variates.of(i, e), scale[i], importance_of(e));
  }
  __device__ float value(std::int64_t i, std::int64_t e) const {
    return whole(i) ? 1.0f : rules::labor_weight(scale[i], importance_of(e));
  }
};

template <class Draw>
__global__ void entry_decisions(Draw p, std::int64_t entries, edge_t* kept) {
  const std::int64_t e = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x;
  if (e >= entries) return;
  kept[e] = p.keeps(p.entries().row_of_entry(e), e) ? 1 : 0;
}

// kept_before[e]: the kept entries before entry e (kept_before[entries]: all).
template <class Draw>
__global__ void write_kept_entries(Draw p, std::int64_t entries, const edge_t* kept_before,
                                   vertex_t* out_indices, float* out_values) {
  const std::int64_t e = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x;
  if (e >= entries || kept_before[e + 1] == kept_before[e]) return;
  const std::int64_t i = p.entries().row_of_entry(e);
  out_indices[kept_before[e]] = p.entries().column_of_entry(i, e);
  if (out_values != nullptr) out_values[kept_before[e]] = p.value(i, e);
}

__global__ void row_starts(frontier_entries f, const edge_t* kept_before, edge_t* out_indptr) {
  const std::int64_t i = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x;
  if (i > f.count) return;
  out_indptr[i] = kept_before[f.entry_offsets[i]];
}

// The entries `p` keeps, in stored order, each row's together; with their
// values where `with_values`.
template <class Draw>
csr_matrix kept_entries(const executor& exec, const Draw& p, std::int64_t entries,
                        bool with_values) {
  const cudaStream_t stream = stream_of(exec);
  const frontier_entries& f = p.variates.f;
  buffer<edge_t> kept_before(static_cast<std::size_t>(entries) + 1, exec.memory());
  BULKGNN_CUDA_CHECK(cudaMemsetAsync(kept_before.data(), 0, sizeof(edge_t), stream));
  if (entries > 0) {
    entry_decisions<<<blocks_for(entries), threads_per_block, 0, stream>>>(p, entries,
                                                                           kept_before.data() + 1);
    BULKGNN_CUDA_CHECK_LAUNCH();
    inclusive_scan(exec, kept_before.data() + 1, entries);
  }
  const auto kept = static_cast<std::size_t>(read_back(exec, kept_before.data() + entries));
  csr_matrix out;
  out.rows = f.count;
  out.cols = f.graph.cols;
  out.indptr = buffer<edge_t>(static_cast<std::size_t>(f.count) + 1, exec.memory());
  out.indices = buffer<vertex_t>(kept, exec.memory());
  if (with_values) out.values = buffer<float>(kept, exec.memory());
  row_starts<<<blocks_for(f.count + 1), threads_per_block, 0, stream>>>(f, kept_before.data(),
                                                                        out.indptr.data());
  BULKGNN_CUDA_CHECK_LAUNCH();
  if (entries > 0) {
    write_kept_entries<<<blocks_for(entries), threads_per_block, 0, stream>>>(
        p, entries, kept_before.data(), out.indices.data(),
        with_values ? out.values.data() : nullptr);
    BULKGNN_CUDA_CHECK_LAUNCH();
  }
  return out;
}

// LABOR-i's numbering: every entry's (minibatch, column) sorted stably, so
// that a run of equal keys starts at the column's first appearance.
__global__ void minibatch_column_keys(frontier_entries f, const std::int64_t* segment_offsets,
                                      std::int64_t segments, std::int64_t entries,
                                      std::uint64_t* keys, std::int64_t* positions) {
  const std::int64_t e = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x;
  if (e >= entries) return;
  const std::int64_t i = f.row_of_entry(e);
  keys[e] = segment_vertex_key(segment_offsets, segments, i, f.column_of_entry(i, e));
  positions[e] = e;
}

// runs[j] = 1 where sorted key j starts a run.
__global__ void run_heads(const std::uint64_t* sorted_keys, std::int64_t entries,
                          std::int64_t* runs) {
  const std::int64_t j = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x;
  if (j < entries) runs[j] = j == 0 || sorted_keys[j] != sorted_keys[j - 1] ? 1 : 0;
}

// For each run (numbered by the inclusive scan of the heads, from 1): the
// position of its first entry, as a sort key, and the run.
__global__ void first_appearances(const std::int64_t* run_of_sorted,
                                  const std::int64_t* sorted_positions, std::int64_t entries,
                                  std::uint64_t* first_position, std::int64_t* run) {
  const std::int64_t j = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x;
  if (j >= entries || (j > 0 && run_of_sorted[j] == run_of_sorted[j - 1])) return;
  const std::int64_t r = run_of_sorted[j] - 1;
  first_position[r] = static_cast<std::uint64_t>(sorted_positions[j]);
  run[r] = r;
}

__global__ void ranks_of_runs(const std::int64_t* run_in_order, std::int64_t columns,
                              std::int64_t* rank) {
  const std::int64_t k = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x;
  if (k < columns) rank[run_in_order[k]] = k;
}

__global__ void local_columns(const std::int64_t* run_of_sorted,
                              const std::int64_t* sorted_positions, const std::int64_t* rank,
                              std::int64_t entries, std::int64_t* local) {
  const std::int64_t j = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x;
  if (j < entries) local[sorted_positions[j]] = rank[run_of_sorted[j] - 1];
}

// first_local[m]: minibatch m's first column number (the columns, in order
// of first appearance, fall in minibatch order); first_local[segments]:
// every column.
__global__ void minibatch_first_columns(frontier_entries f, const std::int64_t* segment_offsets,
                                        std::int64_t segments,
                                        const std::uint64_t* ordered_first_positions,
                                        std::int64_t columns, std::int64_t* first_local) {
  const std::int64_t m = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x;
  if (m > segments) return;
  // The first column whose first entry lies in a row of minibatch m or later
  // (segment_offsets[segments] is the row count).
  const std::int64_t first_entry = f.entry_offsets[segment_offsets[m]];
  std::int64_t low = 0;
  std::int64_t high = columns;
  while (low < high) {
    const std::int64_t middle = (low + high) / 2;
    if (static_cast<std::int64_t>(ordered_first_positions[middle]) < first_entry)
      low = middle + 1;
    else
      high = middle;
  }
  first_local[m] = low;
}

// The state of LABOR-i's fixed-point steps. Each minibatch (segment) steps
// until it converges, then stays as it is while the others go on.
struct importance_steps {
  frontier_entries f;
  const std::int64_t* segment_offsets;  // device memory
  std::int64_t segments;
  std::int64_t fanout;
  const std::int64_t* local;
  const std::int64_t* first_local;
  double* importance;
  double* stepped;
  unsigned long long* largest;  // a non-negative double's bits order as the double
  double* scale;
  double* previous;
  int* active;

  __device__ std::int64_t segment_of_row(std::int64_t i) const {
    return last_offset_at_or_below(segment_offsets, segments, i);
  }
  __device__ std::int64_t segment_of_column(std::int64_t k) const {
    return last_offset_at_or_below(first_local, segments, k);
  }
};

// Row i's importances, read through the numbering.
struct row_importances {
  const double* importance;
  const std::int64_t* local;
  __device__ double operator[](std::size_t k) const { return importance[local[k]]; }
};

__global__ void row_scales(importance_steps s) {
  const std::int64_t i = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x;
  if (i >= s.f.count || !s.active[s.segment_of_row(i)]) return;
  const auto degree = static_cast<std::size_t>(s.f.degree(i));
  const row_importances row{s.importance, s.local + s.f.entry_offsets[i]};
  if (degree == 0)
    s.scale[i] = 0.0;
  else if (static_cast<std::int64_t>(degree) <= s.fanout)
    s.scale[i] = rules::labor_whole_row_scale(row, degree);
  else
    s.scale[i] = rules::labor_row_scale(row, degree, s.fanout);
}

__global__ void largest_scales(importance_steps s, std::int64_t entries) {
  const std::int64_t e = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x;
  if (e >= entries) return;
  const std::int64_t i = s.f.row_of_entry(e);
  if (!s.active[s.segment_of_row(i)]) return;
  // The host's largest starts at 0, so a scale below it never counts.
  const double scale = s.scale[i] > 0.0 ? s.scale[i] : 0.0;
  atomicMax(s.largest + s.local[e], static_cast<unsigned long long>(__double_as_longlong(scale)));
}

__global__ void stepped_importances(importance_steps s, std::int64_t columns) {
  const std::int64_t k = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x;
  if (k >= columns || !s.active[s.segment_of_column(k)]) return;
  s.stepped[k] = s.importance[k] * __longlong_as_double(static_cast<long long>(s.largest[k]));
}

// One thread per minibatch: Σ min(1, stepped) in column order, the host's
// sum; a minibatch whose step no longer pays (until_converged) freezes.
__global__ void expected_counts(importance_steps s, bool until_converged) {
  const std::int64_t m = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x;
  if (m >= s.segments || !s.active[m]) return;
  double expected = 0.0;
  for (std::int64_t k = s.first_local[m]; k < s.first_local[m + 1]; ++k)
    expected += s.stepped[k] < 1.0 ? s.stepped[k] : 1.0;
  if (until_converged && expected >= s.previous[m] * (1.0 - rules::labor_tolerance))
    s.active[m] = 0;
  else
    s.previous[m] = expected;
}

__global__ void take_steps(importance_steps s, std::int64_t columns) {
  const std::int64_t k = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x;
  if (k < columns && s.active[s.segment_of_column(k)]) s.importance[k] = s.stepped[k];
}

template <class T>
__global__ void fill_values(T* x, std::int64_t count, T value) {
  const std::int64_t k = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x;
  if (k < count) x[k] = value;
}

__global__ void flag_active(const int* active, std::int64_t segments, int* any) {
  const std::int64_t m = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x;
  if (m < segments && active[m]) atomicExch(any, 1);
}

// Whether a minibatch is still taking steps (a read-back).
bool any_active(const executor& exec, const importance_steps& s) {
  auto any = device_flag(exec);
  flag_active<<<blocks_for(s.segments), threads_per_block, 0, stream_of(exec)>>>(
      s.active, s.segments, any.data());
  BULKGNN_CUDA_CHECK_LAUNCH();
  return read_back(exec, any.data()) != 0;
}

column_variates variates_of(const frontier_entries& f, const row_streams& streams) {
  return {.f = f,
          .minibatch_of_row = streams.minibatch_of_row.data(),
          .seed = streams.seed,
          .epoch = streams.epoch,
          .layer = streams.layer};
}

// Numbers each entry's column within its minibatch, in order of first
// appearance (local, one per entry); fills first_local (segments + 1) and
// returns the count of columns.
std::int64_t number_columns(const executor& exec, const frontier_entries& f,
                            const std::int64_t* segment_offsets, std::int64_t segments,
                            std::int64_t entries, buffer<std::int64_t>& local,
                            buffer<std::int64_t>& first_local) {
  const cudaStream_t stream = stream_of(exec);
  auto& device = exec.memory();
  local = buffer<std::int64_t>(static_cast<std::size_t>(entries), device);
  first_local = buffer<std::int64_t>(static_cast<std::size_t>(segments) + 1, device);
  buffer<std::uint64_t> keys(static_cast<std::size_t>(entries), device);
  buffer<std::uint64_t> sorted_keys(static_cast<std::size_t>(entries), device);
  buffer<std::int64_t> positions(static_cast<std::size_t>(entries), device);
  buffer<std::int64_t> sorted_positions(static_cast<std::size_t>(entries), device);
  minibatch_column_keys<<<blocks_for(entries), threads_per_block, 0, stream>>>(
      f, segment_offsets, segments, entries, keys.data(), positions.data());
  BULKGNN_CUDA_CHECK_LAUNCH();
  sort_pairs(exec, keys.data(), sorted_keys.data(), positions.data(), sorted_positions.data(),
             entries, row_key_bits(segments));
  buffer<std::int64_t> run_of_sorted(static_cast<std::size_t>(entries), device);
  run_heads<<<blocks_for(entries), threads_per_block, 0, stream>>>(sorted_keys.data(), entries,
                                                                   run_of_sorted.data());
  BULKGNN_CUDA_CHECK_LAUNCH();
  inclusive_scan(exec, run_of_sorted.data(), entries);
  const std::int64_t columns = read_back(exec, run_of_sorted.data() + entries - 1);
  buffer<std::uint64_t> first_position(static_cast<std::size_t>(columns), device);
  buffer<std::uint64_t> ordered_first_positions(static_cast<std::size_t>(columns), device);
  buffer<std::int64_t> run(static_cast<std::size_t>(columns), device);
  buffer<std::int64_t> run_in_order(static_cast<std::size_t>(columns), device);
  first_appearances<<<blocks_for(entries), threads_per_block, 0, stream>>>(
      run_of_sorted.data(), sorted_positions.data(), entries, first_position.data(), run.data());
  BULKGNN_CUDA_CHECK_LAUNCH();
  sort_pairs(exec, first_position.data(), ordered_first_positions.data(), run.data(),
             run_in_order.data(), columns);
  buffer<std::int64_t> rank(static_cast<std::size_t>(columns), device);
  ranks_of_runs<<<blocks_for(columns), threads_per_block, 0, stream>>>(run_in_order.data(), columns,
                                                                       rank.data());
  BULKGNN_CUDA_CHECK_LAUNCH();
  local_columns<<<blocks_for(entries), threads_per_block, 0, stream>>>(
      run_of_sorted.data(), sorted_positions.data(), rank.data(), entries, local.data());
  BULKGNN_CUDA_CHECK_LAUNCH();
  minibatch_first_columns<<<blocks_for(segments + 1), threads_per_block, 0, stream>>>(
      f, segment_offsets, segments, ordered_first_positions.data(), columns, first_local.data());
  BULKGNN_CUDA_CHECK_LAUNCH();
  return columns;
}

// Runs LABOR-i's fixed-point steps (importances and scales in `s`).
void step_importances(const executor& exec, const importance_steps& s, std::int64_t entries,
                      std::int64_t columns, std::int64_t iterations) {
  const cudaStream_t stream = stream_of(exec);
  const bool until_converged = iterations == -1;
  const std::int64_t steps = until_converged ? rules::labor_iteration_limit : iterations;
  for (std::int64_t step = 0; step < steps; ++step) {
    BULKGNN_CUDA_CHECK(cudaMemsetAsync(s.largest, 0, sizeof(unsigned long long) * columns, stream));
    largest_scales<<<blocks_for(entries), threads_per_block, 0, stream>>>(s, entries);
    BULKGNN_CUDA_CHECK_LAUNCH();
    stepped_importances<<<blocks_for(columns), threads_per_block, 0, stream>>>(s, columns);
    BULKGNN_CUDA_CHECK_LAUNCH();
    expected_counts<<<blocks_for(s.segments), threads_per_block, 0, stream>>>(s, until_converged);
    BULKGNN_CUDA_CHECK_LAUNCH();
    take_steps<<<blocks_for(columns), threads_per_block, 0, stream>>>(s, columns);
    BULKGNN_CUDA_CHECK_LAUNCH();
    row_scales<<<blocks_for(s.f.count), threads_per_block, 0, stream>>>(s);
    BULKGNN_CUDA_CHECK_LAUNCH();
    // Until converged, stop once every minibatch has (a read-back a step).
    if (until_converged && !any_active(exec, s)) break;
  }
}

}  // namespace

csr_matrix sample_rows_with_shared_variates(const executor& exec, csr_view a,
                                            std::span<const vertex_t> rows,
                                            const row_streams& streams, std::int64_t fanout) {
  frontier_entries f{.graph = a,
                     .rows = rows.data(),
                     .count = static_cast<std::int64_t>(rows.size()),
                     .entry_offsets = nullptr};
  buffer<std::int64_t> entry_offsets;
  const std::int64_t entries =
      lay_out_entries(exec, f, entry_offsets, "sample_rows_with_shared_variates");
  const shared_variate_draw p{.variates = variates_of(f, streams), .fanout = fanout};
  return kept_entries(exec, p, entries, false);
}

csr_matrix sample_rows_with_importance(const executor& exec, csr_view a,
                                       const segmented_vertices& rows, const row_streams& streams,
                                       std::int64_t fanout, std::int64_t iterations) {
  const cudaStream_t stream = stream_of(exec);
  auto& device = exec.memory();
  frontier_entries f{.graph = a,
                     .rows = rows.vertices.data(),
                     .count = static_cast<std::int64_t>(rows.vertices.size()),
                     .entry_offsets = nullptr};
  buffer<std::int64_t> entry_offsets;
  const std::int64_t entries =
      lay_out_entries(exec, f, entry_offsets, "sample_rows_with_importance");
  const std::int64_t segments = rows.segments();
  const device_offsets segment_offsets(exec, rows.offsets);
  buffer<std::int64_t> local;
  buffer<std::int64_t> first_local;
  const std::int64_t columns = entries == 0 ? 0
                                            : number_columns(exec, f, segment_offsets.data(),
                                                             segments, entries, local, first_local);
  buffer<double> importance(static_cast<std::size_t>(columns), device);
  buffer<double> stepped(static_cast<std::size_t>(columns), device);
  buffer<unsigned long long> largest(static_cast<std::size_t>(columns), device);
  buffer<double> scale(static_cast<std::size_t>(f.count), device);
  buffer<double> previous(static_cast<std::size_t>(segments), device);
  buffer<int> active(static_cast<std::size_t>(segments), device);
  if (entries > 0) {
    fill_values<<<blocks_for(columns), threads_per_block, 0, stream>>>(importance.data(), columns,
                                                                       1.0);
    BULKGNN_CUDA_CHECK_LAUNCH();
    fill_values<<<blocks_for(segments), threads_per_block, 0, stream>>>(
        previous.data(), segments, std::numeric_limits<double>::infinity());
    BULKGNN_CUDA_CHECK_LAUNCH();
    fill_values<<<blocks_for(segments), threads_per_block, 0, stream>>>(active.data(), segments, 1);
    BULKGNN_CUDA_CHECK_LAUNCH();
    const importance_steps s{.f = f,
                             .segment_offsets = segment_offsets.data(),
                             .segments = segments,
                             .fanout = fanout,
                             .local = local.data(),
                             .first_local = first_local.data(),
                             .importance = importance.data(),
                             .stepped = stepped.data(),
                             .largest = largest.data(),
                             .scale = scale.data(),
                             .previous = previous.data(),
                             .active = active.data()};
    row_scales<<<blocks_for(f.count), threads_per_block, 0, stream>>>(s);
    BULKGNN_CUDA_CHECK_LAUNCH();
    step_importances(exec, s, entries, columns, iterations);
  }
  const importance_draw p{.variates = variates_of(f, streams),
                          .fanout = fanout,
                          .local = local.data(),
                          .importance = importance.data(),
                          .scale = scale.data()};
  return kept_entries(exec, p, entries, true);
}

}  // namespace bulkgnn::kernels::cuda
