#include <algorithm>

#include "kernels.hpp"

namespace bulkgnn::kernels::reference {

csr_matrix drop_excluded_edges(csr_view drawn, const segmented_vertices& frontier,
                               const excluded_edges& excluded) {
  csr_matrix out;
  out.rows = drawn.rows;
  out.cols = drawn.cols;
  out.indptr = {0};
  for (std::int64_t j = 0; j < frontier.segments(); ++j) {
    const auto first = excluded.keys.begin() + excluded.offsets[j];
    const auto last = excluded.keys.begin() + excluded.offsets[j + 1];
    for (std::int64_t i = frontier.offsets[j]; i < frontier.offsets[j + 1]; ++i) {
      for (edge_t e = drawn.indptr[i]; e < drawn.indptr[i + 1]; ++e) {
        const vertex_t source = drawn.indices[e - drawn.indptr[0]];
        if (std::find(first, last, edge_key(frontier.vertices[i], source)) != last) continue;
        out.indices.push_back(source);
        if (drawn.weighted()) out.values.push_back(drawn.values[e - drawn.indptr[0]]);
      }
      out.indptr.push_back(static_cast<edge_t>(out.indices.size()));
    }
  }
  return out;
}

}  // namespace bulkgnn::kernels::reference
