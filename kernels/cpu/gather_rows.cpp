#include <algorithm>

#include "common.hpp"
#include "kernels.hpp"

namespace bulkgnn::kernels::cpu {

csr_matrix gather_rows(csr_view a, std::span<const vertex_t> rows) {
  csr_matrix out = allocate_rows(static_cast<std::int64_t>(rows.size()), a.cols, a.weighted(),
                                 [&](std::int64_t i) { return a.degree(rows[i]); });
  for_each_row(out.rows, [&](const tbb::blocked_range<std::int64_t>& range) {
    for (std::int64_t i = range.begin(); i < range.end(); ++i) {
      const auto columns = a.row(rows[i]);
      std::copy(columns.begin(), columns.end(), out.indices.begin() + out.indptr[i]);
      if (!a.weighted()) continue;
      const auto values = a.row_values(rows[i]);
      std::copy(values.begin(), values.end(), out.values.begin() + out.indptr[i]);
    }
  });
  return out;
}

}  // namespace bulkgnn::kernels::cpu
