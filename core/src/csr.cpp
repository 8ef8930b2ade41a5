#include "bulkgnn/core/csr.hpp"

#include "bulkgnn/core/error.hpp"

#include <fmt/format.h>

namespace bulkgnn {

std::string find_csr_problem(csr_view m) {
  BULKGNN_ASSERT(host_accessible(m.space));
  if (m.rows < 0 || m.cols < 0) return fmt::format("negative shape {}x{}", m.rows, m.cols);
  if (static_cast<std::int64_t>(m.indptr.size()) != m.rows + 1)
    return fmt::format("indptr has {} entries, expected rows + 1 = {}", m.indptr.size(),
                       m.rows + 1);
  for (std::int64_t r = 0; r < m.rows; ++r)
    if (m.indptr[r + 1] < m.indptr[r])
      return fmt::format("indptr decreases at row {} ({} > {})", r, m.indptr[r], m.indptr[r + 1]);
  if (static_cast<std::int64_t>(m.indices.size()) != m.nnz())
    return fmt::format("indices has {} entries, indptr spans {}", m.indices.size(), m.nnz());
  if (!m.values.empty() && m.values.size() != m.indices.size())
    return fmt::format("values has {} entries, indices has {}", m.values.size(), m.indices.size());
  for (std::size_t e = 0; e < m.indices.size(); ++e)
    if (m.indices[e] < 0 || m.indices[e] >= m.cols)
      return fmt::format("column index {} at entry {} is outside [0, {})", m.indices[e], e, m.cols);
  return {};
}

}  // namespace bulkgnn
