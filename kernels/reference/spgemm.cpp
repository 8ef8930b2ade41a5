#include <map>

#include "kernels.hpp"

namespace bulkgnn::kernels::reference {
namespace {

double value_at(csr_view m, std::int64_t row, std::size_t position) {
  return m.weighted() ? static_cast<double>(m.row_values(row)[position]) : 1.0;
}

// Appends the entries of `accumulator` as the next row of `out`, rounded once.
void append_row(const std::map<vertex_t, double>& accumulator, csr_matrix& out) {
  for (const auto& [column, value] : accumulator) {
    out.indices.push_back(column);
    out.values.push_back(static_cast<float>(value));
  }
  out.indptr.push_back(static_cast<edge_t>(out.indices.size()));
}

// Adds row r of m to the accumulator, entry by entry in storage order.
void accumulate_row(csr_view m, std::int64_t r, double scale, std::map<vertex_t, double>& acc) {
  const auto columns = m.row(r);
  for (std::size_t e = 0; e < columns.size(); ++e) acc[columns[e]] += scale * value_at(m, r, e);
}

}  // namespace

csr_matrix spgemm(csr_view a, csr_view b) {
  csr_matrix c;
  c.rows = a.rows;
  c.cols = b.cols;
  for (std::int64_t i = 0; i < a.rows; ++i) {
    std::map<vertex_t, double> accumulator;
    const auto inner = a.row(i);
    for (std::size_t e = 0; e < inner.size(); ++e)
      accumulate_row(b, inner[e], value_at(a, i, e), accumulator);
    append_row(accumulator, c);
  }
  return c;
}

csr_matrix add(csr_view a, csr_view b) {
  csr_matrix c;
  c.rows = a.rows;
  c.cols = a.cols;
  for (std::int64_t i = 0; i < a.rows; ++i) {
    std::map<vertex_t, double> accumulator;
    accumulate_row(a, i, 1.0, accumulator);
    accumulate_row(b, i, 1.0, accumulator);
    append_row(accumulator, c);
  }
  return c;
}

void normalize_rows(csr_matrix& m) {
  for (std::int64_t i = 0; i < m.rows; ++i) {
    double sum = 0.0;
    for (edge_t e = m.indptr[i]; e < m.indptr[i + 1]; ++e) sum += m.values[e];
    if (sum == 0.0) continue;
    for (edge_t e = m.indptr[i]; e < m.indptr[i + 1]; ++e)
      m.values[e] = static_cast<float>(m.values[e] / sum);
  }
}

}  // namespace bulkgnn::kernels::reference
