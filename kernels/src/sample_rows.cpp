#include "bulkgnn/kernels/sample_rows.hpp"

#include <tbb/blocked_range.h>
#include <tbb/parallel_reduce.h>

#include <algorithm>
#include <cmath>

#include "../cpu/kernels.hpp"
#include "../cuda/kernels.hpp"
#include "../reference/kernels.hpp"
#include "front_door.hpp"

namespace bulkgnn::kernels {
namespace {

// The first row (in call order) holding a value that is not a positive finite
// number, or rows.size() if there is none.
std::size_t first_row_with_bad_weight(csr_view a, std::span<const vertex_t> rows) {
  return tbb::parallel_reduce(
      tbb::blocked_range<std::size_t>(0, rows.size(), 1024), rows.size(),
      [&](const tbb::blocked_range<std::size_t>& range, std::size_t found) {
        for (std::size_t i = range.begin(); i < range.end() && i < found; ++i) {
          const auto values = a.row_values(rows[i]);
          const bool bad = std::any_of(values.begin(), values.end(),
                                       [](float w) { return !(w > 0.0f && std::isfinite(w)); });
          if (bad) return i;
        }
        return found;
      },
      [](std::size_t x, std::size_t y) { return std::min(x, y); });
}

void check_weights(csr_view a, std::span<const vertex_t> rows,
                   std::string_view function = "sample_rows") {
  const std::size_t bad = first_row_with_bad_weight(a, rows);
  BULKGNN_EXPECTS(bad == rows.size(),
                  "{}: weighted sampling needs positive finite values, but row {} of a "
                  "(rows[{}]) holds one that is not",
                  function, bad < rows.size() ? rows[bad] : 0, bad);
}

}  // namespace

csr_matrix sample_rows(const executor& exec, csr_view a, std::span<const vertex_t> rows,
                       const row_streams& streams, const row_sampling_options& options) {
  // `a` is usually the whole graph and only the sampled rows are read, so its
  // column indices are trusted rather than scanned.
  detail::check_csr_sizes(exec, a, "sample_rows", "a");
  if (detail::span_reachable(exec, rows.data(), "sample_rows", "rows"))
    detail::check_vertices_below(rows, a.rows, "sample_rows", "rows");
  (void)detail::span_reachable(exec, streams.minibatch_of_row.data(), "sample_rows",
                               "streams.minibatch_of_row");
  (void)detail::span_reachable(exec, streams.key_rows.data(), "sample_rows", "streams.key_rows");
  BULKGNN_EXPECTS(streams.key_rows.empty() || streams.key_rows.size() == rows.size(),
                  "sample_rows: streams.key_rows has {} entries but rows has {}",
                  streams.key_rows.size(), rows.size());
  BULKGNN_EXPECTS(streams.minibatch_of_row.size() == rows.size(),
                  "sample_rows: streams.minibatch_of_row has {} entries but rows has {}",
                  streams.minibatch_of_row.size(), rows.size());
  BULKGNN_EXPECTS(options.fanout == -1 || options.fanout > 0,
                  "sample_rows: options.fanout is {}, expected -1 (all) or a positive count",
                  options.fanout);
  // Device-resident weights are left to the draw (a non-positive weight
  // there is the caller's promise broken, as trusted column indices are).
  if (options.weights == weighting::by_value && a.weighted() && host_accessible(a.space) &&
      detail::span_reachable(exec, rows.data(), "sample_rows", "rows"))
    check_weights(a, rows);
  return detail::dispatch(
      exec, "sample_rows", [&] { return reference::sample_rows(a, rows, streams, options); },
      [&] { return cpu::sample_rows(a, rows, streams, options); },
      [&] { return cuda::sample_rows(exec, a, rows, streams, options); });
}

csr_matrix sample_rows_with_shared_variates(const executor& exec, csr_view a,
                                            std::span<const vertex_t> rows,
                                            const row_streams& streams, std::int64_t fanout) {
  constexpr std::string_view function = "sample_rows_with_shared_variates";
  detail::check_csr_sizes(exec, a, function, "a");
  // Rows the host cannot read are checked by the kernel.
  if (detail::span_reachable(exec, rows.data(), function, "rows"))
    detail::check_vertices_below(rows, a.rows, function, "rows");
  (void)detail::span_reachable(exec, streams.minibatch_of_row.data(), function,
                               "streams.minibatch_of_row");
  BULKGNN_EXPECTS(streams.minibatch_of_row.size() == rows.size(),
                  "{}: streams.minibatch_of_row has {} entries but rows has {}", function,
                  streams.minibatch_of_row.size(), rows.size());
  BULKGNN_EXPECTS(fanout > 0, "{}: fanout is {}, expected a positive count", function, fanout);
  return detail::dispatch(
      exec, function,
      [&] { return reference::sample_rows_with_shared_variates(a, rows, streams, fanout); },
      [&] { return cpu::sample_rows_with_shared_variates(a, rows, streams, fanout); },
      [&] { return cuda::sample_rows_with_shared_variates(exec, a, rows, streams, fanout); });
}

csr_matrix sample_rows_with_importance(const executor& exec, csr_view a,
                                       const segmented_vertices& rows, const row_streams& streams,
                                       std::int64_t fanout, std::int64_t iterations) {
  constexpr std::string_view function = "sample_rows_with_importance";
  detail::check_csr_sizes(exec, a, function, "a");
  detail::check_segments(exec, rows, function, "rows");
  if (detail::span_reachable(exec, rows.vertices.data(), function, "rows.vertices"))
    detail::check_vertices_below(rows.vertices, a.rows, function, "rows");
  (void)detail::span_reachable(exec, streams.minibatch_of_row.data(), function,
                               "streams.minibatch_of_row");
  BULKGNN_EXPECTS(streams.minibatch_of_row.size() == rows.vertices.size(),
                  "{}: streams.minibatch_of_row has {} entries but rows has {}", function,
                  streams.minibatch_of_row.size(), rows.vertices.size());
  BULKGNN_EXPECTS(fanout > 0, "{}: fanout is {}, expected a positive count", function, fanout);
  BULKGNN_EXPECTS(iterations >= -1,
                  "{}: iterations is {}, expected a count of steps or -1 (until converged)",
                  function, iterations);
  return detail::dispatch(
      exec, function,
      [&] { return reference::sample_rows_with_importance(a, rows, streams, fanout, iterations); },
      [&] { return cpu::sample_rows_with_importance(a, rows, streams, fanout, iterations); },
      [&] {
        return cuda::sample_rows_with_importance(exec, a, rows, streams, fanout, iterations);
      });
}

std::vector<keyed_entry> smallest_keyed_entries(const executor& exec, csr_view a,
                                                std::span<const vertex_t> rows,
                                                std::span<const std::int64_t> first_position,
                                                const row_streams& streams, std::int64_t fanout) {
  constexpr std::string_view function = "smallest_keyed_entries";
  detail::check_csr_sizes(exec, a, function, "a");
  detail::check_vertices_below(rows, a.rows, function, "rows");
  BULKGNN_EXPECTS(a.weighted(), "{}: a has no values to weigh its entries by", function);
  BULKGNN_EXPECTS(
      first_position.size() == rows.size() && streams.minibatch_of_row.size() == rows.size(),
      "{}: first_position has {} and streams.minibatch_of_row {} entries for {} rows", function,
      first_position.size(), streams.minibatch_of_row.size(), rows.size());
  BULKGNN_EXPECTS(std::all_of(first_position.begin(), first_position.end(),
                              [](std::int64_t p) { return p >= 0 && p < (std::int64_t{1} << 33); }),
                  "{}: a first_position is outside [0, 2^33), the stream's length in draws",
                  function);
  BULKGNN_EXPECTS(fanout > 0, "{}: fanout is {}, expected a positive count", function, fanout);
  check_weights(a, rows, function);
  return detail::dispatch(
      exec, function,
      [&] { return reference::smallest_keyed_entries(a, rows, first_position, streams, fanout); },
      [&] { return cpu::smallest_keyed_entries(a, rows, first_position, streams, fanout); });
}

csr_matrix take_smallest_keys(const executor& exec, std::span<const keyed_entry> candidates,
                              std::int64_t rows, std::int64_t cols, std::int64_t fanout) {
  constexpr std::string_view function = "take_smallest_keys";
  BULKGNN_EXPECTS(rows >= 0 && cols >= 0 && fanout > 0, "{}: rows {}, cols {}, fanout {}", function,
                  rows, cols, fanout);
  for (const auto& c : candidates)
    BULKGNN_EXPECTS(c.row >= 0 && c.row < rows && c.column >= 0 && c.column < cols,
                    "{}: a candidate at ({}, {}) is outside the {} x {} result", function, c.row,
                    c.column, rows, cols);
  return detail::dispatch(
      exec, function, [&] { return reference::take_smallest_keys(candidates, rows, cols, fanout); },
      [&] { return cpu::take_smallest_keys(candidates, rows, cols, fanout); });
}

}  // namespace bulkgnn::kernels
