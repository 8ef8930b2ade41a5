#include <tbb/parallel_for.h>
#include <tbb/parallel_sort.h>

#include <algorithm>
#include <numeric>

#include "common.hpp"
#include "kernels.hpp"

namespace bulkgnn::kernels::cpu {
namespace {

vertex_t position_of(vertex_t value, std::span<const vertex_t> sorted) {
  return static_cast<vertex_t>(std::lower_bound(sorted.begin(), sorted.end(), value) -
                               sorted.begin());
}

// Calls body(i) for i in [0, count), in parallel blocks.
template <class Body>
void for_each_index(std::int64_t count, Body&& body) {
  tbb::parallel_for(tbb::blocked_range<std::int64_t>(0, count, 4096),
                    [&](const tbb::blocked_range<std::int64_t>& r) {
                      for (std::int64_t i = r.begin(); i < r.end(); ++i) body(i);
                    });
}

}  // namespace

buffer<vertex_t> sorted_distinct(std::span<const vertex_t> vertices) {
  buffer<vertex_t> distinct(vertices.begin(), vertices.end());
  tbb::parallel_sort(distinct.begin(), distinct.end());
  distinct.erase(std::unique(distinct.begin(), distinct.end()), distinct.end());
  return distinct;
}

buffer<vertex_t> positions_in_sorted(std::span<const vertex_t> values,
                                     std::span<const vertex_t> sorted) {
  buffer<vertex_t> positions(values.size());
  for_each_index(static_cast<std::int64_t>(values.size()),
                 [&](std::int64_t i) { positions[i] = position_of(values[i], sorted); });
  return positions;
}

buffer<std::uint32_t> repeat_per_segment(std::span<const std::int64_t> offsets,
                                         std::span<const std::uint32_t> values) {
  buffer<std::uint32_t> out(static_cast<std::size_t>(offsets.back()));
  tbb::parallel_for(std::size_t{0}, values.size(), [&](std::size_t j) {
    std::fill(out.begin() + offsets[j], out.begin() + offsets[j + 1], values[j]);
  });
  return out;
}

csr_matrix frontier_selection(const segmented_vertices& frontier,
                              std::span<const vertex_t> distinct, std::span<const edge_t> degrees,
                              std::int64_t num_vertices) {
  csr_matrix q;
  q.rows = frontier.segments();
  q.cols = num_vertices;
  q.indptr.assign(frontier.offsets.begin(), frontier.offsets.end());
  q.indices = frontier.vertices;
  q.values.resize(q.indices.size());
  tbb::parallel_for(std::int64_t{0}, q.rows, [&](std::int64_t j) {
    std::sort(q.indices.begin() + q.indptr[j], q.indices.begin() + q.indptr[j + 1]);
  });
  for_each_index(static_cast<std::int64_t>(q.indices.size()), [&](std::int64_t e) {
    const auto k = static_cast<std::size_t>(position_of(q.indices[e], distinct));
    const double degree = static_cast<double>(degrees[k]) + 1.0;
    q.values[e] = static_cast<float>(1.0 / (degree * degree));
  });
  return q;
}

csr_matrix frontier_selection(const segmented_vertices& frontier,
                              std::span<const vertex_t> distinct, csr_view rows,
                              std::span<const vertex_t> row_of, std::int64_t num_vertices) {
  std::vector<edge_t> degrees(distinct.size());
  for_each_index(static_cast<std::int64_t>(degrees.size()),
                 [&](std::int64_t k) { degrees[k] = rows.degree(row_of[k]); });
  return frontier_selection(frontier, distinct, degrees, num_vertices);
}

csr_matrix rename_columns(csr_view m, std::span<const vertex_t> sorted_keys,
                          std::span<const vertex_t> mapped, std::int64_t cols) {
  csr_matrix out;
  out.rows = m.rows;
  out.cols = cols;
  out.indptr.assign(m.indptr.begin(), m.indptr.end());
  out.values.assign(m.values.begin(), m.values.end());
  out.indices.resize(m.indices.size());
  for_each_index(static_cast<std::int64_t>(m.indices.size()), [&](std::int64_t e) {
    out.indices[e] = mapped[static_cast<std::size_t>(position_of(m.indices[e], sorted_keys))];
  });
  return out;
}

csr_matrix with_self_loops(csr_view rows, std::span<const vertex_t> row_of,
                           std::span<const vertex_t> vertices) {
  const auto count = static_cast<std::int64_t>(row_of.size());
  csr_matrix out;
  out.rows = count;
  out.cols = rows.cols;
  out.indptr.assign(static_cast<std::size_t>(count) + 1, 0);
  for_each_index(count, [&](std::int64_t i) {
    const auto row = rows.row(row_of[i]);
    const bool has_loop = std::find(row.begin(), row.end(), vertices[i]) != row.end();
    out.indptr[i + 1] = static_cast<edge_t>(row.size()) + (has_loop ? 0 : 1);
  });
  std::inclusive_scan(out.indptr.begin(), out.indptr.end(), out.indptr.begin());
  out.indices.resize(static_cast<std::size_t>(out.indptr.back()));
  for_each_index(count, [&](std::int64_t i) {
    const auto row = rows.row(row_of[i]);
    auto* at = std::copy(row.begin(), row.end(), out.indices.begin() + out.indptr[i]);
    if (at != out.indices.begin() + out.indptr[i + 1]) *at = vertices[i];
  });
  return out;
}

csr_matrix spread_to_segment_starts(csr_view per_segment, std::span<const std::int64_t> offsets) {
  csr_matrix out;
  out.rows = offsets.back();
  out.cols = per_segment.cols;
  out.indptr.assign(static_cast<std::size_t>(out.rows) + 1, 0);
  for (std::int64_t j = 0; j < per_segment.rows; ++j)
    out.indptr[offsets[j] + 1] = per_segment.degree(j);
  std::inclusive_scan(out.indptr.begin(), out.indptr.end(), out.indptr.begin());
  out.indices.assign(per_segment.indices.begin(), per_segment.indices.end());
  return out;
}

csr_matrix columns_in_range(csr_view m, vertex_t first, vertex_t last) {
  const auto in_range = [&](vertex_t c) { return c >= first && c < last; };
  csr_matrix out = allocate_rows(m.rows, m.cols, m.weighted(), [&](std::int64_t r) {
    const auto columns = m.row(r);
    return static_cast<edge_t>(std::count_if(columns.begin(), columns.end(), in_range));
  });
  for_each_row(m.rows, [&](const tbb::blocked_range<std::int64_t>& range) {
    for (std::int64_t r = range.begin(); r < range.end(); ++r) {
      const auto columns = m.row(r);
      edge_t at = out.indptr[r];
      for (std::size_t e = 0; e < columns.size(); ++e) {
        if (!in_range(columns[e])) continue;
        out.indices[at] = columns[e];
        if (m.weighted()) out.values[at] = m.row_values(r)[e];
        ++at;
      }
    }
  });
  return out;
}

void invert_probabilities(std::span<float> values) {
  for_each_index(static_cast<std::int64_t>(values.size()),
                 [&](std::int64_t i) { values[i] = 1.0f / values[i]; });
}

}  // namespace bulkgnn::kernels::cpu
