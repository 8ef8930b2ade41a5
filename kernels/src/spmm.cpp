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
  detail::dispatch(
      exec, "spmm", [&] { reference::spmm(a, x, y); }, [&] { cpu::spmm(a, x, y); });
}

csr_matrix transpose(const executor& exec, csr_view a) {
  detail::check_csr(exec, a, "transpose", "a");
  // Rows of `a` become column indices of the result.
  BULKGNN_EXPECTS(a.rows <= std::numeric_limits<vertex_t>::max(),
                  "transpose: a has {} rows, more than a column index can hold", a.rows);
  return detail::dispatch(
      exec, "transpose", [&] { return reference::transpose(a); },
      [&] { return cpu::transpose(a); });
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

}  // namespace bulkgnn::kernels
