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

column_slices slice_columns(csr_view rows, std::span<const vertex_t> row_of, vertex_t first,
                            vertex_t last) {
  column_slices out;
  out.rows.rows = static_cast<std::int64_t>(row_of.size());
  out.rows.cols = rows.cols;
  out.rows.indptr.reserve(row_of.size() + 1);  // holds its leading 0
  out.degrees.reserve(row_of.size());
  for (const vertex_t row : row_of) {
    const auto columns = rows.row(row);
    for (const vertex_t c : columns)
      if (c >= first && c < last) out.rows.indices.push_back(c);
    out.rows.indptr.push_back(static_cast<edge_t>(out.rows.indices.size()));
    out.degrees.push_back(static_cast<edge_t>(columns.size()));
  }
  return out;
}

column_slices row_source::rows_in_columns(std::span<const vertex_t> vertices, vertex_t first,
                                          vertex_t last) {
  const auto fetched = rows(vertices);
  return slice_columns(fetched.rows, fetched.row_of, first, last);
}

}  // namespace bulkgnn::sampler
