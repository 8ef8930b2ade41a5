#include "bulkgnn/kernels/frontier.hpp"

#include <algorithm>
#include <cmath>
#include <functional>

#include "../cpu/kernels.hpp"
#include "../cuda/kernels.hpp"
#include "../reference/kernels.hpp"
#include "front_door.hpp"

namespace bulkgnn::kernels {
namespace {

void check_strictly_ascending(std::span<const vertex_t> values, std::string_view function,
                              std::string_view argument) {
  const auto repeat = std::adjacent_find(values.begin(), values.end(), std::greater_equal<>());
  BULKGNN_EXPECTS(repeat == values.end(), "{}: {} is not strictly ascending at position {}",
                  function, argument, repeat - values.begin());
}

void check_offsets(std::span<const std::int64_t> offsets, std::string_view function,
                   std::string_view argument) {
  BULKGNN_EXPECTS(!offsets.empty() && offsets.front() == 0, "{}: {} must start with 0", function,
                  argument);
  BULKGNN_EXPECTS(std::is_sorted(offsets.begin(), offsets.end()), "{}: {} must not decrease",
                  function, argument);
}

// Every value must be a key: the oracle checks what the fast back end trusts.
void check_all_found(const executor& exec, std::span<const vertex_t> values,
                     std::span<const vertex_t> sorted, std::string_view function,
                     std::string_view argument) {
  if (exec.kind() != backend::reference) return;
  for (const vertex_t v : values)
    BULKGNN_EXPECTS(std::binary_search(sorted.begin(), sorted.end(), v),
                    "{}: {} holds {}, which is not among the sorted keys", function, argument, v);
}

}  // namespace

buffer<vertex_t> sorted_distinct(const executor& exec, std::span<const vertex_t> vertices) {
  (void)detail::span_reachable(exec, vertices.data(), "sorted_distinct", "vertices");
  return detail::dispatch(
      exec, "sorted_distinct", [&] { return reference::sorted_distinct(vertices); },
      [&] { return cpu::sorted_distinct(vertices); },
      [&] { return cuda::sorted_distinct(exec, vertices); });
}

buffer<vertex_t> positions_in_sorted(const executor& exec, std::span<const vertex_t> values,
                                     std::span<const vertex_t> sorted) {
  constexpr std::string_view function = "positions_in_sorted";
  (void)detail::span_reachable(exec, values.data(), function, "values");
  if (detail::span_reachable(exec, sorted.data(), function, "sorted"))
    check_strictly_ascending(sorted, function, "sorted");
  check_all_found(exec, values, sorted, function, "values");
  return detail::dispatch(
      exec, function, [&] { return reference::positions_in_sorted(values, sorted); },
      [&] { return cpu::positions_in_sorted(values, sorted); },
      [&] { return cuda::positions_in_sorted(exec, values, sorted); });
}

buffer<std::uint32_t> repeat_per_segment(const executor& exec,
                                         std::span<const std::int64_t> offsets,
                                         std::span<const std::uint32_t> values) {
  constexpr std::string_view function = "repeat_per_segment";
  BULKGNN_EXPECTS(detail::span_reachable(exec, offsets.data(), function, "offsets"),
                  "{}: offsets must be in host-readable memory (pinned for a cuda executor)",
                  function);
  check_offsets(offsets, function, "offsets");
  BULKGNN_EXPECTS(values.size() + 1 == offsets.size(), "{}: {} values for {} segments", function,
                  values.size(), offsets.size() - 1);
  (void)detail::span_reachable(exec, values.data(), function, "values");
  return detail::dispatch(
      exec, function, [&] { return reference::repeat_per_segment(offsets, values); },
      [&] { return cpu::repeat_per_segment(offsets, values); },
      [&] { return cuda::repeat_per_segment(exec, offsets, values); });
}

csr_matrix frontier_selection(const executor& exec, const segmented_vertices& frontier,
                              std::span<const vertex_t> distinct, csr_view rows,
                              std::span<const vertex_t> row_of, std::int64_t num_vertices) {
  constexpr std::string_view function = "frontier_selection";
  detail::check_segments(exec, frontier, function, "frontier");
  detail::check_csr_sizes(exec, rows, function, "rows");
  if (detail::span_reachable(exec, distinct.data(), function, "distinct"))
    check_strictly_ascending(distinct, function, "distinct");
  BULKGNN_EXPECTS(row_of.size() == distinct.size(), "{}: row_of has {} entries for {} vertices",
                  function, row_of.size(), distinct.size());
  if (detail::span_reachable(exec, row_of.data(), function, "row_of"))
    detail::check_vertices_below(row_of, rows.rows, function, "row_of");
  if (host_accessible(frontier.vertices.space()))
    detail::check_vertices_below(frontier.vertices, num_vertices, function, "frontier.vertices");
  check_all_found(exec, frontier.vertices, distinct, function, "frontier.vertices");
  return detail::dispatch(
      exec, function,
      [&] { return reference::frontier_selection(frontier, distinct, rows, row_of, num_vertices); },
      [&] { return cpu::frontier_selection(frontier, distinct, rows, row_of, num_vertices); },
      [&] {
        return cuda::frontier_selection(exec, frontier, distinct, rows, row_of, num_vertices);
      });
}

csr_matrix frontier_selection(const executor& exec, const segmented_vertices& frontier,
                              std::span<const vertex_t> distinct, std::span<const edge_t> degrees,
                              std::int64_t num_vertices) {
  constexpr std::string_view function = "frontier_selection";
  detail::check_segments(exec, frontier, function, "frontier");
  if (detail::span_reachable(exec, distinct.data(), function, "distinct"))
    check_strictly_ascending(distinct, function, "distinct");
  BULKGNN_EXPECTS(degrees.size() == distinct.size(), "{}: degrees has {} entries for {} vertices",
                  function, degrees.size(), distinct.size());
  if (detail::span_reachable(exec, degrees.data(), function, "degrees")) {
    const auto negative =
        std::find_if(degrees.begin(), degrees.end(), [](edge_t d) { return d < 0; });
    BULKGNN_EXPECTS(negative == degrees.end(), "{}: degrees holds {} at position {}", function,
                    negative == degrees.end() ? 0 : *negative, negative - degrees.begin());
  }
  if (host_accessible(frontier.vertices.space()))
    detail::check_vertices_below(frontier.vertices, num_vertices, function, "frontier.vertices");
  check_all_found(exec, frontier.vertices, distinct, function, "frontier.vertices");
  return detail::dispatch(
      exec, function,
      [&] { return reference::frontier_selection(frontier, distinct, degrees, num_vertices); },
      [&] { return cpu::frontier_selection(frontier, distinct, degrees, num_vertices); });
}

csr_matrix rename_columns(const executor& exec, csr_view m, std::span<const vertex_t> sorted_keys,
                          std::span<const vertex_t> mapped, std::int64_t cols) {
  constexpr std::string_view function = "rename_columns";
  detail::check_csr_sizes(exec, m, function, "m");
  if (detail::span_reachable(exec, sorted_keys.data(), function, "sorted_keys"))
    check_strictly_ascending(sorted_keys, function, "sorted_keys");
  BULKGNN_EXPECTS(mapped.size() == sorted_keys.size(), "{}: {} mapped ids for {} keys", function,
                  mapped.size(), sorted_keys.size());
  if (detail::span_reachable(exec, mapped.data(), function, "mapped"))
    detail::check_vertices_below(mapped, cols, function, "mapped");
  check_all_found(exec, m.indices, sorted_keys, function, "m.indices");
  return detail::dispatch(
      exec, function, [&] { return reference::rename_columns(m, sorted_keys, mapped, cols); },
      [&] { return cpu::rename_columns(m, sorted_keys, mapped, cols); },
      [&] { return cuda::rename_columns(exec, m, sorted_keys, mapped, cols); });
}

csr_matrix with_self_loops(const executor& exec, csr_view rows, std::span<const vertex_t> row_of,
                           std::span<const vertex_t> vertices) {
  constexpr std::string_view function = "with_self_loops";
  detail::check_csr_sizes(exec, rows, function, "rows");
  BULKGNN_EXPECTS(row_of.size() == vertices.size(), "{}: row_of has {} entries for {} vertices",
                  function, row_of.size(), vertices.size());
  // Spans the host cannot read are checked by the kernel.
  if (detail::span_reachable(exec, row_of.data(), function, "row_of"))
    detail::check_vertices_below(row_of, rows.rows, function, "row_of");
  if (detail::span_reachable(exec, vertices.data(), function, "vertices"))
    detail::check_vertices_below(vertices, rows.cols, function, "vertices");
  return detail::dispatch(
      exec, function, [&] { return reference::with_self_loops(rows, row_of, vertices); },
      [&] { return cpu::with_self_loops(rows, row_of, vertices); },
      [&] { return cuda::with_self_loops(exec, rows, row_of, vertices); });
}

csr_matrix spread_to_segment_starts(const executor& exec, csr_view per_segment,
                                    std::span<const std::int64_t> offsets) {
  constexpr std::string_view function = "spread_to_segment_starts";
  detail::check_csr_sizes(exec, per_segment, function, "per_segment");
  BULKGNN_EXPECTS(detail::span_reachable(exec, offsets.data(), function, "offsets"),
                  "{}: offsets must be in host-readable memory (pinned for a cuda executor)",
                  function);
  check_offsets(offsets, function, "offsets");
  BULKGNN_EXPECTS(static_cast<std::int64_t>(offsets.size()) == per_segment.rows + 1,
                  "{}: {} segments for {} rows", function, offsets.size() - 1, per_segment.rows);
  const auto empty = std::adjacent_find(offsets.begin(), offsets.end(), std::equal_to<>());
  BULKGNN_EXPECTS(empty == offsets.end(), "{}: segment {} is empty", function,
                  empty - offsets.begin());
  return detail::dispatch(
      exec, function, [&] { return reference::spread_to_segment_starts(per_segment, offsets); },
      [&] { return cpu::spread_to_segment_starts(per_segment, offsets); },
      [&] { return cuda::spread_to_segment_starts(exec, per_segment, offsets); });
}

csr_matrix columns_in_range(const executor& exec, csr_view m, vertex_t first, vertex_t last) {
  constexpr std::string_view function = "columns_in_range";
  detail::check_csr_sizes(exec, m, function, "m");
  BULKGNN_EXPECTS(0 <= first && first <= last && last <= m.cols,
                  "{}: columns [{}, {}) of a matrix with {} columns", function, first, last,
                  m.cols);
  return detail::dispatch(
      exec, function, [&] { return reference::columns_in_range(m, first, last); },
      [&] { return cpu::columns_in_range(m, first, last); });
}

void invert_probabilities(const executor& exec, std::span<float> values) {
  // The cuda kernel checks the values it inverts itself.
  if (detail::span_reachable(exec, values.data(), "invert_probabilities", "values"))
    for (std::size_t i = 0; i < values.size(); ++i)
      BULKGNN_EXPECTS(values[i] > 0.0f && std::isfinite(values[i]),
                      "invert_probabilities: values[{}] = {} is not a positive probability", i,
                      values[i]);
  detail::dispatch(
      exec, "invert_probabilities", [&] { reference::invert_probabilities(values); },
      [&] { cpu::invert_probabilities(values); },
      [&] { cuda::invert_probabilities(exec, values); });
}

}  // namespace bulkgnn::kernels
