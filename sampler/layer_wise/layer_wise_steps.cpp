#include "layer_wise_steps.hpp"

#include "../src/hop_helpers.hpp"
#include "bulkgnn/kernels/frontier.hpp"
#include "bulkgnn/kernels/relabel.hpp"
#include "bulkgnn/kernels/spgemm.hpp"
#include "bulkgnn/sampler/sampling_algorithm.hpp"

#include <numeric>
#include <vector>

namespace bulkgnn::sampler::detail {

csr_matrix selection_times_rows(const executor& exec, csr_view q,
                                std::span<const vertex_t> distinct, const gathered_rows& rows,
                                bool self_loops) {
  const csr_matrix q_on_rows =
      kernels::rename_columns(exec, q, distinct, rows.row_of, rows.rows.rows);
  csr_matrix qa = kernels::spgemm(exec, q_on_rows.view(), pattern_of(rows.rows));
  if (!self_loops) return qa;
  return kernels::add(exec, qa.view(), q);
}

per_minibatch_rows rows_per_minibatch(const executor& exec,
                                      std::span<const std::int64_t> minibatch_ids,
                                      bool one_shared_row) {
  const auto count = minibatch_ids.size();
  std::vector<vertex_t> row_numbers(count, 0);
  if (!one_shared_row) std::iota(row_numbers.begin(), row_numbers.end(), 0);
  return {on_executor(exec, std::span<const vertex_t>(row_numbers)),
          on_executor(exec, std::span<const std::uint32_t>(stream_ids(minibatch_ids))),
          on_executor(exec, std::span<const vertex_t>(std::vector<vertex_t>(count, 0)))};
}

segmented_vertices frontier_then_drawn(const executor& exec, const segmented_vertices& frontier,
                                       csr_view drawn) {
  const auto spread = kernels::spread_to_segment_starts(exec, drawn, frontier.offsets);
  return kernels::relabel_by_segment(exec, frontier, spread.view()).sources;
}

csr_matrix extract_layer_blocks(const executor& exec, const segmented_vertices& destinations,
                                const segmented_vertices& sources,
                                std::span<const float> column_scale,
                                std::span<const vertex_t> distinct, const gathered_rows& rows,
                                bool self_loops) {
  if (!rows.fetched) {
    return kernels::extract_blocks(exec, pattern_of(rows.rows), destinations, sources, column_scale,
                                   self_loops);
  }
  // The rows were fetched for `distinct`, in its order: the destinations
  // renamed to their positions there name them. Where self loops are asked,
  // the fetched rows get theirs here: extracting from these without adding
  // self loops gives what extract_blocks adding them gives on the whole graph.
  segmented_vertices destination_rows;
  destination_rows.vertices = kernels::positions_in_sorted(exec, destinations.vertices, distinct);
  destination_rows.offsets = destinations.offsets;
  if (!self_loops) {
    return kernels::extract_blocks(exec, pattern_of(rows.rows), destination_rows, sources,
                                   column_scale, false);
  }
  const auto looped = kernels::with_self_loops(exec, rows.rows, rows.row_of, distinct);
  return kernels::extract_blocks(exec, looped.view(), destination_rows, sources, column_scale,
                                 false);
}

}  // namespace bulkgnn::sampler::detail
