#include "bulkgnn/sampler/row_source.hpp"

#include <numeric>
#include <utility>

namespace bulkgnn::sampler {

gathered_rows wrap_fetched_rows(csr_matrix fetched) {
  gathered_rows g;
  g.fetched = true;
  g.fetched_rows = std::move(fetched);
  g.rows = g.fetched_rows.view();
  g.positions.resize(static_cast<std::size_t>(g.fetched_rows.rows));
  std::iota(g.positions.begin(), g.positions.end(), 0);
  g.row_of = g.positions;
  return g;
}

csr_matrix row_source::draw_rows(const executor& exec, std::span<const vertex_t> vertices,
                                 const kernels::row_streams& streams,
                                 const kernels::row_sampling_options& draw) {
  const auto fetched = rows(vertices);
  return kernels::sample_rows(exec, fetched.rows, fetched.row_of, streams, draw);
}

}  // namespace bulkgnn::sampler
