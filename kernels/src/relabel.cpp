#include "bulkgnn/kernels/relabel.hpp"

#include <algorithm>

#include "../cpu/kernels.hpp"
#include "../cuda/kernels.hpp"
#include "../reference/kernels.hpp"
#include "front_door.hpp"

namespace bulkgnn::kernels {

relabelled_blocks relabel_by_segment(const executor& exec, const segmented_vertices& destinations,
                                     csr_view sampled, relabel_method method) {
  constexpr std::string_view function = "relabel_by_segment";
  detail::check_segments(exec, destinations, function, "destinations");
  detail::check_csr(exec, sampled, function, "sampled");
  BULKGNN_EXPECTS(sampled.rows == static_cast<std::int64_t>(destinations.vertices.size()),
                  "{}: sampled has {} rows but there are {} destinations", function, sampled.rows,
                  destinations.vertices.size());
  if (host_accessible(destinations.vertices.space()))
    detail::check_vertices_below(destinations.vertices, sampled.cols, function,
                                 "destinations.vertices");
  // Distinctness costs a sort per segment on the sampler's hot path, so only
  // the reference back end, the oracle, pays for checking it.
  if (exec.kind() == backend::reference)
    detail::check_distinct_within_segments(destinations, function, "destinations");
  return detail::dispatch(
      exec, function, [&] { return reference::relabel_by_segment(destinations, sampled); },
      [&] { return cpu::relabel_by_segment(destinations, sampled); },
      [&] { return cuda::relabel_by_segment(exec, destinations, sampled, method); });
}

csr_matrix extract_blocks(const executor& exec, csr_view a, const segmented_vertices& rows,
                          const segmented_vertices& cols, std::span<const float> column_scale,
                          bool add_self_loops) {
  constexpr std::string_view function = "extract_blocks";
  // `a` is usually the whole graph and only the selected rows are read, so its
  // column indices are trusted rather than scanned.
  detail::check_csr_sizes(exec, a, function, "a");
  detail::check_segments(exec, rows, function, "rows");
  detail::check_segments(exec, cols, function, "cols");
  BULKGNN_EXPECTS(rows.segments() == cols.segments(), "{}: rows has {} segments but cols has {}",
                  function, rows.segments(), cols.segments());
  BULKGNN_EXPECTS(column_scale.size() == cols.vertices.size(),
                  "{}: column_scale has {} entries but cols has {} vertices", function,
                  column_scale.size(), cols.vertices.size());
  (void)detail::span_reachable(exec, column_scale.data(), function, "column_scale");
  if (host_accessible(rows.vertices.space()))
    detail::check_vertices_below(rows.vertices, a.rows, function, "rows.vertices");
  if (host_accessible(cols.vertices.space()))
    detail::check_vertices_below(cols.vertices, a.cols, function, "cols.vertices");
  if (exec.kind() == backend::reference)
    detail::check_distinct_within_segments(cols, function, "cols");
  return detail::dispatch(
      exec, function,
      [&] { return reference::extract_blocks(a, rows, cols, column_scale, add_self_loops); },
      [&] { return cpu::extract_blocks(a, rows, cols, column_scale, add_self_loops); },
      [&] { return cuda::extract_blocks(exec, a, rows, cols, column_scale, add_self_loops); });
}

csr_matrix columns_as_vertices(const executor& exec, csr_view blocks,
                               std::span<const std::int64_t> row_offsets,
                               const segmented_vertices& sources, std::int64_t num_vertices) {
  constexpr std::string_view function = "columns_as_vertices";
  detail::check_csr(exec, blocks, function, "blocks");
  detail::check_segments(exec, sources, function, "sources");
  BULKGNN_EXPECTS(detail::span_reachable(exec, row_offsets.data(), function, "row_offsets"),
                  "{}: row_offsets must be in host-readable memory (pinned for a cuda executor)",
                  function);
  BULKGNN_EXPECTS(static_cast<std::int64_t>(row_offsets.size()) == sources.segments() + 1 &&
                      row_offsets.front() == 0 && row_offsets.back() == blocks.rows &&
                      std::is_sorted(row_offsets.begin(), row_offsets.end()),
                  "{}: row_offsets must rise from 0 to the {} rows of blocks in {} segments",
                  function, blocks.rows, sources.segments());
  if (host_accessible(sources.vertices.space()))
    detail::check_vertices_below(sources.vertices, num_vertices, function, "sources.vertices");
  if (exec.kind() == backend::reference)
    for (std::int64_t j = 0; j < sources.segments(); ++j)
      for (auto e = blocks.indptr[row_offsets[j]]; e < blocks.indptr[row_offsets[j + 1]]; ++e) {
        const vertex_t column = blocks.indices[e - blocks.indptr.front()];
        BULKGNN_EXPECTS(column < sources.size(j),
                        "{}: a row of segment {} uses column {} of its {} sources", function, j,
                        column, sources.size(j));
      }
  return detail::dispatch(
      exec, function,
      [&] { return reference::columns_as_vertices(blocks, row_offsets, sources, num_vertices); },
      [&] { return cpu::columns_as_vertices(blocks, row_offsets, sources, num_vertices); },
      [&] { return cuda::columns_as_vertices(exec, blocks, row_offsets, sources, num_vertices); });
}

buffer<float> lookup_entries(const executor& exec, csr_view a, std::span<const vertex_t> rows,
                             const segmented_vertices& cols) {
  constexpr std::string_view function = "lookup_entries";
  detail::check_csr_sizes(exec, a, function, "a");
  detail::check_segments(exec, cols, function, "cols");
  BULKGNN_EXPECTS(static_cast<std::int64_t>(rows.size()) == cols.segments(),
                  "{}: {} rows for {} segments of cols", function, rows.size(), cols.segments());
  if (detail::span_reachable(exec, rows.data(), function, "rows"))
    detail::check_vertices_below(rows, a.rows, function, "rows");
  // Sortedness of the looked-up rows is the caller's promise; the reference
  // back end, the oracle, checks it.
  if (exec.kind() == backend::reference)
    for (const vertex_t r : rows)
      BULKGNN_EXPECTS(std::is_sorted(a.row(r).begin(), a.row(r).end()),
                      "{}: row {} of a is not sorted", function, r);
  return detail::dispatch(
      exec, function, [&] { return reference::lookup_entries(a, rows, cols); },
      [&] { return cpu::lookup_entries(a, rows, cols); },
      [&] { return cuda::lookup_entries(exec, a, rows, cols); });
}

}  // namespace bulkgnn::kernels
