#include "bulkgnn/kernels/spmm.hpp"

#include <limits>

#include "../cpu/kernels.hpp"
#include "../cuda/kernels.hpp"
#include "../reference/kernels.hpp"
#include "front_door.hpp"

namespace bulkgnn::kernels {

void spmm(const executor& exec, csr_view a, dense_view<const float> x, dense_view<float> y) {
  detail::check_csr(exec, a, "spmm", "a");
  detail::check_dense(exec, x, "spmm", "x");
  detail::check_dense(exec, y, "spmm", "y");
  BULKGNN_EXPECTS(x.rows == a.cols, "spmm: a is {}x{} but x has {} rows", a.rows, a.cols, x.rows);
  BULKGNN_EXPECTS(y.rows == a.rows && y.cols == x.cols, "spmm: y is {}x{}, expected {}x{}", y.rows,
                  y.cols, a.rows, x.cols);
  detail::check_disjoint(x.data, y.data, "spmm", "x", "y");
  // A layer's own edge values may sit apart from the rest of `a`.
  if (a.weighted()) (void)detail::span_reachable(exec, a.values.data(), "spmm", "a.values");
  detail::dispatch(
      exec, "spmm", [&] { reference::spmm(a, x, y); }, [&] { cpu::spmm(a, x, y); },
      [&] { cuda::spmm(exec, a, x, y); });
}

void sddmm(const executor& exec, csr_view pattern, dense_view<const float> a,
           dense_view<const float> b, std::span<float> out) {
  constexpr std::string_view function = "sddmm";
  detail::check_csr(exec, pattern, function, "pattern");
  detail::check_dense(exec, a, function, "a");
  detail::check_dense(exec, b, function, "b");
  BULKGNN_EXPECTS(a.rows == pattern.rows && b.rows == pattern.cols && a.cols == b.cols,
                  "sddmm: pattern is {}x{} but a is {}x{} and b {}x{} (expected {} and {} rows, "
                  "equal columns)",
                  pattern.rows, pattern.cols, a.rows, a.cols, b.rows, b.cols, pattern.rows,
                  pattern.cols);
  // indices' length, not indptr's span: a device pattern's offsets are not
  // host-readable.
  BULKGNN_EXPECTS(out.size() == pattern.indices.size(),
                  "sddmm: out holds {} values for the pattern's {} entries", out.size(),
                  pattern.indices.size());
  (void)detail::span_reachable(exec, out.data(), function, "out");
  detail::check_disjoint(a.data, out, function, "a", "out");
  detail::check_disjoint(b.data, out, function, "b", "out");
  detail::dispatch(
      exec, function, [&] { reference::sddmm(pattern, a, b, out); },
      [&] { cpu::sddmm(pattern, a, b, out); }, [&] { cuda::sddmm(exec, pattern, a, b, out); });
}

csr_matrix transpose(const executor& exec, csr_view a) {
  detail::check_csr(exec, a, "transpose", "a");
  // Rows of `a` become column indices of the result.
  BULKGNN_EXPECTS(a.rows <= std::numeric_limits<vertex_t>::max(),
                  "transpose: a has {} rows, more than a column index can hold", a.rows);
  return detail::dispatch(
      exec, "transpose", [&] { return reference::transpose(a); }, [&] { return cpu::transpose(a); },
      [&] { return cuda::transpose(exec, a); });
}

void gather_dense_rows(const executor& exec, dense_view<const float> x,
                       std::span<const vertex_t> rows, dense_view<float> out) {
  detail::check_dense(exec, x, "gather_dense_rows", "x");
  detail::check_dense(exec, out, "gather_dense_rows", "out");
  BULKGNN_EXPECTS(out.rows == static_cast<std::int64_t>(rows.size()) && out.cols == x.cols,
                  "gather_dense_rows: out is {}x{}, expected {}x{}", out.rows, out.cols,
                  rows.size(), x.cols);
  if (detail::span_reachable(exec, rows.data(), "gather_dense_rows", "rows"))
    detail::check_vertices_below(rows, x.rows, "gather_dense_rows", "rows");
  detail::check_disjoint(x.data, out.data, "gather_dense_rows", "x", "out");
  detail::dispatch(
      exec, "gather_dense_rows", [&] { reference::gather_dense_rows(x, rows, out); },
      [&] { cpu::gather_dense_rows(x, rows, out); },
      [&] { cuda::gather_dense_rows(exec, x, rows, out); });
}

void scatter_dense_rows(const executor& exec, dense_view<const float> x,
                        std::span<const vertex_t> rows, float scale, dense_view<float> out) {
  constexpr std::string_view function = "scatter_dense_rows";
  detail::check_dense(exec, x, function, "x");
  detail::check_dense(exec, out, function, "out");
  BULKGNN_EXPECTS(x.rows == static_cast<std::int64_t>(rows.size()) && x.cols == out.cols,
                  "scatter_dense_rows: x is {}x{}, expected {}x{}", x.rows, x.cols, rows.size(),
                  out.cols);
  if (detail::span_reachable(exec, rows.data(), function, "rows"))
    detail::check_distinct_vertices_below(rows, out.rows, function, "rows");
  detail::check_disjoint(x.data, out.data, function, "x", "out");
  detail::dispatch(
      exec, function, [&] { reference::scatter_dense_rows(x, rows, scale, out); },
      [&] { cpu::scatter_dense_rows(x, rows, scale, out); },
      [&] { cuda::scatter_dense_rows(exec, x, rows, scale, out); });
}

std::int64_t gather_cached_rows(const executor& exec, const cached_rows& x,
                                std::span<const vertex_t> rows, dense_view<float> out) {
  constexpr std::string_view function = "gather_cached_rows";
  detail::check_dense(exec, x.all, function, "x.all");
  detail::check_dense(exec, x.cache, function, "x.cache");
  detail::check_dense(exec, out, function, "out");
  BULKGNN_EXPECTS(x.cache.rows == 0 || x.cache.cols == x.all.cols,
                  "{}: x.cache has {} columns, x.all {}", function, x.cache.cols, x.all.cols);
  BULKGNN_EXPECTS(static_cast<std::int64_t>(x.slot_of.size()) == x.all.rows,
                  "{}: x.slot_of has {} entries for {} rows", function, x.slot_of.size(),
                  x.all.rows);
  BULKGNN_EXPECTS(out.rows == static_cast<std::int64_t>(rows.size()) && out.cols == x.all.cols,
                  "{}: out is {}x{}, expected {}x{}", function, out.rows, out.cols, rows.size(),
                  x.all.cols);
  if (detail::span_reachable(exec, rows.data(), function, "rows"))
    detail::check_vertices_below(rows, x.all.rows, function, "rows");
  if (detail::span_reachable(exec, x.slot_of.data(), function, "x.slot_of"))
    for (std::size_t v = 0; v < x.slot_of.size(); ++v)
      BULKGNN_EXPECTS(x.slot_of[v] >= -1 && x.slot_of[v] < x.cache.rows,
                      "{}: x.slot_of[{}] = {} is neither -1 nor a row of the {}-row cache",
                      function, v, x.slot_of[v], x.cache.rows);
  detail::check_disjoint(x.all.data, out.data, function, "x.all", "out");
  detail::check_disjoint(x.cache.data, out.data, function, "x.cache", "out");
  return detail::dispatch(
      exec, function, [&] { return reference::gather_cached_rows(x, rows, out); },
      [&] { return cpu::gather_cached_rows(x, rows, out); },
      [&] { return cuda::gather_cached_rows(exec, x, rows, out); });
}

}  // namespace bulkgnn::kernels
