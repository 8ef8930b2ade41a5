#include "bulkgnn/kernels/sample_rows.hpp"

#include <tbb/blocked_range.h>
#include <tbb/parallel_reduce.h>

#include <algorithm>
#include <cmath>

#include "../cpu/kernels.hpp"
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

void check_weights(csr_view a, std::span<const vertex_t> rows) {
  const std::size_t bad = first_row_with_bad_weight(a, rows);
  BULKGNN_EXPECTS(bad == rows.size(),
                  "sample_rows: weighted sampling needs positive finite values, but row {} of a "
                  "(rows[{}]) holds one that is not",
                  bad < rows.size() ? rows[bad] : 0, bad);
}

}  // namespace

csr_matrix sample_rows(const executor& exec, csr_view a, std::span<const vertex_t> rows,
                       const row_streams& streams, const row_sampling_options& options) {
  // `a` is usually the whole graph and only the sampled rows are read, so its
  // column indices are trusted rather than scanned.
  detail::check_csr_sizes(exec, a, "sample_rows", "a");
  detail::check_vertices_below(rows, a.rows, "sample_rows", "rows");
  BULKGNN_EXPECTS(streams.minibatch_of_row.size() == rows.size(),
                  "sample_rows: streams.minibatch_of_row has {} entries but rows has {}",
                  streams.minibatch_of_row.size(), rows.size());
  BULKGNN_EXPECTS(options.fanout == -1 || options.fanout > 0,
                  "sample_rows: options.fanout is {}, expected -1 (all) or a positive count",
                  options.fanout);
  if (options.weights == weighting::by_value && a.weighted()) check_weights(a, rows);
  return detail::dispatch(
      exec, "sample_rows", [&] { return reference::sample_rows(a, rows, streams, options); },
      [&] { return cpu::sample_rows(a, rows, streams, options); });
}

}  // namespace bulkgnn::kernels
