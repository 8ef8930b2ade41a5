#include "kernels.hpp"

namespace bulkgnn::kernels::reference {

csr_matrix gather_rows(csr_view a, std::span<const vertex_t> rows) {
  csr_matrix out;
  out.rows = static_cast<std::int64_t>(rows.size());
  out.cols = a.cols;
  for (const vertex_t r : rows) {
    const auto columns = a.row(r);
    out.indices.insert(out.indices.end(), columns.begin(), columns.end());
    if (a.weighted()) {
      const auto values = a.row_values(r);
      out.values.insert(out.values.end(), values.begin(), values.end());
    }
    out.indptr.push_back(static_cast<edge_t>(out.indices.size()));
  }
  return out;
}

}  // namespace bulkgnn::kernels::reference
