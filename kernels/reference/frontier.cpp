#include <algorithm>
#include <set>

#include "kernels.hpp"

namespace bulkgnn::kernels::reference {

buffer<vertex_t> sorted_distinct(std::span<const vertex_t> vertices) {
  const std::set<vertex_t> distinct(vertices.begin(), vertices.end());
  return buffer<vertex_t>(distinct.begin(), distinct.end());
}

buffer<vertex_t> positions_in_sorted(std::span<const vertex_t> values,
                                     std::span<const vertex_t> sorted) {
  buffer<vertex_t> positions;
  for (const vertex_t v : values)
    for (std::size_t k = 0; k < sorted.size(); ++k)
      if (sorted[k] == v) positions.push_back(static_cast<vertex_t>(k));
  return positions;
}

buffer<std::uint32_t> repeat_per_segment(std::span<const std::int64_t> offsets,
                                         std::span<const std::uint32_t> values) {
  buffer<std::uint32_t> out;
  for (std::size_t j = 0; j + 1 < offsets.size(); ++j)
    for (std::int64_t i = offsets[j]; i < offsets[j + 1]; ++i) out.push_back(values[j]);
  return out;
}

csr_matrix frontier_selection(const segmented_vertices& frontier,
                              std::span<const vertex_t> distinct, std::span<const edge_t> degrees,
                              std::int64_t num_vertices) {
  const auto positions = positions_in_sorted(frontier.vertices, distinct);
  csr_matrix q;
  q.rows = frontier.segments();
  q.cols = num_vertices;
  for (std::int64_t j = 0; j < q.rows; ++j) {
    std::vector<std::pair<vertex_t, float>> entries;
    for (std::int64_t i = frontier.offsets[j]; i < frontier.offsets[j + 1]; ++i) {
      const double degree = static_cast<double>(degrees[positions[i]]) + 1.0;
      entries.emplace_back(frontier.vertices[i], static_cast<float>(1.0 / (degree * degree)));
    }
    std::sort(entries.begin(), entries.end());
    for (const auto& [u, weight] : entries) {
      q.indices.push_back(u);
      q.values.push_back(weight);
    }
    q.indptr.push_back(static_cast<edge_t>(q.indices.size()));
  }
  return q;
}

csr_matrix frontier_selection(const segmented_vertices& frontier,
                              std::span<const vertex_t> distinct, csr_view rows,
                              std::span<const vertex_t> row_of, std::int64_t num_vertices) {
  std::vector<edge_t> degrees;
  for (const vertex_t row : row_of) degrees.push_back(rows.degree(row));
  return frontier_selection(frontier, distinct, degrees, num_vertices);
}

csr_matrix rename_columns(csr_view m, std::span<const vertex_t> sorted_keys,
                          std::span<const vertex_t> mapped, std::int64_t cols) {
  csr_matrix out;
  out.rows = m.rows;
  out.cols = cols;
  out.indptr.assign(m.indptr.begin(), m.indptr.end());
  for (const vertex_t c : m.indices)
    for (std::size_t k = 0; k < sorted_keys.size(); ++k)
      if (sorted_keys[k] == c) out.indices.push_back(mapped[k]);
  out.values.assign(m.values.begin(), m.values.end());
  return out;
}

csr_matrix with_self_loops(csr_view rows, std::span<const vertex_t> row_of,
                           std::span<const vertex_t> vertices) {
  csr_matrix out;
  out.rows = static_cast<std::int64_t>(row_of.size());
  out.cols = rows.cols;
  for (std::size_t i = 0; i < row_of.size(); ++i) {
    bool has_loop = false;
    for (const vertex_t c : rows.row(row_of[i])) {
      out.indices.push_back(c);
      has_loop = has_loop || c == vertices[i];
    }
    if (!has_loop) out.indices.push_back(vertices[i]);
    out.indptr.push_back(static_cast<edge_t>(out.indices.size()));
  }
  return out;
}

csr_matrix spread_to_segment_starts(csr_view per_segment, std::span<const std::int64_t> offsets) {
  csr_matrix out;
  out.cols = per_segment.cols;
  for (std::int64_t j = 0; j < per_segment.rows; ++j) {
    for (std::int64_t i = offsets[j]; i < offsets[j + 1]; ++i) {
      if (i == offsets[j])
        for (const vertex_t c : per_segment.row(j)) out.indices.push_back(c);
      out.indptr.push_back(static_cast<edge_t>(out.indices.size()));
    }
  }
  out.rows = static_cast<std::int64_t>(out.indptr.size()) - 1;
  return out;
}

csr_matrix columns_in_range(csr_view m, vertex_t first, vertex_t last) {
  csr_matrix out;
  out.rows = m.rows;
  out.cols = m.cols;
  for (std::int64_t r = 0; r < m.rows; ++r) {
    const auto columns = m.row(r);
    for (std::size_t e = 0; e < columns.size(); ++e) {
      if (columns[e] < first || columns[e] >= last) continue;
      out.indices.push_back(columns[e]);
      if (m.weighted()) out.values.push_back(m.row_values(r)[e]);
    }
    out.indptr.push_back(static_cast<edge_t>(out.indices.size()));
  }
  return out;
}

void invert_probabilities(std::span<float> values) {
  for (float& p : values) p = 1.0f / p;
}

}  // namespace bulkgnn::kernels::reference
