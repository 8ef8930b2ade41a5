#include "bulkgnn/trainer/placement.hpp"

#include "bulkgnn/core/error.hpp"

#include <vector>

namespace bulkgnn::trainer {

bool needs_placing(const executor& exec, memory_space space) {
  const memory_space own = exec.memory().space();
  if (space == own) return false;
  if (!host_accessible(space))
    throw internal_error(
        fmt::format("needs_placing: data in {} memory for a {} executor; copy it to the host first",
                    memory_space_name(space), backend_name(exec.kind())));
  return own == memory_space::device;
}

csr_matrix copy_for(const executor& exec, csr_view m) {
  BULKGNN_EXPECTS(host_accessible(m.space),
                  "copy_for: the matrix is in {} memory, which the host cannot read",
                  memory_space_name(m.space));
  std::vector<edge_t> indptr(m.indptr.size());
  for (std::size_t r = 0; r < indptr.size(); ++r) indptr[r] = m.indptr[r] - m.indptr[0];
  memory_resource& target = exec.memory();
  csr_matrix out;
  out.rows = m.rows;
  out.cols = m.cols;
  out.indptr = copy_to(std::span<const edge_t>(indptr), target);
  out.indices = copy_to(m.indices, target);
  out.values = copy_to(m.values, target);
  return out;
}

}  // namespace bulkgnn::trainer
