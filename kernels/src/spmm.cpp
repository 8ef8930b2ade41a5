#include "bulkgnn/kernels/spmm.hpp"

#include <functional>
#include <limits>

#include "../cpu/kernels.hpp"
#include "../reference/kernels.hpp"
#include "front_door.hpp"

namespace bulkgnn::kernels {
namespace {

// A dense view must be exactly rows × cols: the kernels index rows by
// r · cols without bounds checks.
template <class T>
void check_dense(dense_view<T> m, std::string_view function, std::string_view argument) {
  BULKGNN_EXPECTS(m.rows >= 0 && m.cols >= 0, "{}: {} has negative shape {}x{}", function, argument,
                  m.rows, m.cols);
  BULKGNN_EXPECTS(m.cols == 0 || m.rows <= std::numeric_limits<std::int64_t>::max() / m.cols,
                  "{}: {} shape {}x{} overflows", function, argument, m.rows, m.cols);
  BULKGNN_EXPECTS(static_cast<std::int64_t>(m.data.size()) == m.rows * m.cols,
                  "{}: {} is {}x{} but holds {} elements", function, argument, m.rows, m.cols,
                  m.data.size());
}

// The output is written while the input is still being read, so the two
// buffers must not share memory.
void check_disjoint(std::span<const float> input, std::span<const float> output,
                    std::string_view function, std::string_view input_name,
                    std::string_view output_name) {
  if (input.empty() || output.empty()) return;
  const std::less<const float*> before;
  const bool disjoint = !before(input.data(), output.data() + output.size()) ||
                        !before(output.data(), input.data() + input.size());
  BULKGNN_EXPECTS(disjoint, "{}: {} and {} overlap", function, input_name, output_name);
}

}  // namespace

void spmm(const executor& exec, csr_view a, dense_view<const float> x, dense_view<float> y) {
  detail::check_csr(a, "spmm", "a");
  check_dense(x, "spmm", "x");
  check_dense(y, "spmm", "y");
  BULKGNN_EXPECTS(x.rows == a.cols, "spmm: a is {}x{} but x has {} rows", a.rows, a.cols, x.rows);
  BULKGNN_EXPECTS(y.rows == a.rows && y.cols == x.cols, "spmm: y is {}x{}, expected {}x{}", y.rows,
                  y.cols, a.rows, x.cols);
  check_disjoint(x.data, y.data, "spmm", "x", "y");
  detail::dispatch(
      exec, "spmm", [&] { reference::spmm(a, x, y); }, [&] { cpu::spmm(a, x, y); });
}

csr_matrix transpose(const executor& exec, csr_view a) {
  detail::check_csr(a, "transpose", "a");
  // Rows of `a` become column indices of the result.
  BULKGNN_EXPECTS(a.rows <= std::numeric_limits<vertex_t>::max(),
                  "transpose: a has {} rows, more than a column index can hold", a.rows);
  return detail::dispatch(
      exec, "transpose", [&] { return reference::transpose(a); },
      [&] { return cpu::transpose(a); });
}

void gather_dense_rows(const executor& exec, dense_view<const float> x,
                       std::span<const vertex_t> rows, dense_view<float> out) {
  check_dense(x, "gather_dense_rows", "x");
  check_dense(out, "gather_dense_rows", "out");
  BULKGNN_EXPECTS(out.rows == static_cast<std::int64_t>(rows.size()) && out.cols == x.cols,
                  "gather_dense_rows: out is {}x{}, expected {}x{}", out.rows, out.cols,
                  rows.size(), x.cols);
  detail::check_vertices_below(rows, x.rows, "gather_dense_rows", "rows");
  check_disjoint(x.data, out.data, "gather_dense_rows", "x", "out");
  detail::dispatch(
      exec, "gather_dense_rows", [&] { reference::gather_dense_rows(x, rows, out); },
      [&] { cpu::gather_dense_rows(x, rows, out); });
}

}  // namespace bulkgnn::kernels
