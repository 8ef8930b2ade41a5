#include "bulkgnn/kernels/spgemm.hpp"

#include <algorithm>

#include "../cpu/kernels.hpp"
#include "../cuda/kernels.hpp"
#include "../reference/kernels.hpp"
#include "front_door.hpp"

namespace bulkgnn::kernels {
namespace {

void check_sorted_rows(csr_view m, std::string_view argument) {
  if (!host_accessible(m.space)) return;
  for (std::int64_t r = 0; r < m.rows; ++r) {
    const auto row = m.row(r);
    BULKGNN_EXPECTS(std::is_sorted(row.begin(), row.end()),
                    "add: row {} of {} does not have sorted columns", r, argument);
  }
}

}  // namespace

csr_matrix spgemm(const executor& exec, csr_view a, csr_view b) {
  detail::check_csr(exec, a, "spgemm", "a");
  detail::check_csr(exec, b, "spgemm", "b");
  BULKGNN_EXPECTS(a.cols == b.rows, "spgemm: a is {}x{} but b is {}x{}", a.rows, a.cols, b.rows,
                  b.cols);
  return detail::dispatch(
      exec, "spgemm", [&] { return reference::spgemm(a, b); }, [&] { return cpu::spgemm(a, b); },
      [&] { return cuda::spgemm(exec, a, b); });
}

csr_matrix add(const executor& exec, csr_view a, csr_view b) {
  detail::check_csr(exec, a, "add", "a");
  detail::check_csr(exec, b, "add", "b");
  BULKGNN_EXPECTS(a.rows == b.rows && a.cols == b.cols, "add: a is {}x{} but b is {}x{}", a.rows,
                  a.cols, b.rows, b.cols);
  check_sorted_rows(a, "a");
  check_sorted_rows(b, "b");
  return detail::dispatch(
      exec, "add", [&] { return reference::add(a, b); }, [&] { return cpu::add(a, b); },
      [&] { return cuda::add(exec, a, b); });
}

void normalize_rows(const executor& exec, csr_matrix& m) {
  detail::check_csr(exec, m.view(), "normalize_rows", "m");
  BULKGNN_EXPECTS(m.values.size() == m.indices.size(),
                  "normalize_rows: m must carry values (it has {} values for {} entries)",
                  m.values.size(), m.indices.size());
  detail::dispatch(
      exec, "normalize_rows", [&] { reference::normalize_rows(m); },
      [&] { cpu::normalize_rows(m); }, [&] { cuda::normalize_rows(exec, m); });
}

}  // namespace bulkgnn::kernels
