#include "sliced_blocks.hpp"

#include "bulkgnn/core/error.hpp"

#include <algorithm>
#include <cstdint>
#include <limits>
#include <utility>

namespace bulkgnn::sampler::detail {

std::vector<block_entry> block_entries_in_slices(const segmented_vertices& whole,
                                                 const segmented_vertices& sources,
                                                 std::span<const vertex_t> distinct,
                                                 const column_slices& slices) {
  const csr_view rows = slices.rows.view();
  std::vector<block_entry> found;
  BULKGNN_EXPECTS(
      whole.vertices.size() <= static_cast<std::size_t>(std::numeric_limits<std::int32_t>::max()),
      "bulk_sampler: a bulk's frontier of {} vertices is too large to split",
      whole.vertices.size());
  std::vector<vertex_t> sorted_sources;
  for (std::int64_t j = 0; j < whole.segments(); ++j) {
    const auto in_segment = sources.segment(j);
    sorted_sources.assign(in_segment.begin(), in_segment.end());
    std::sort(sorted_sources.begin(), sorted_sources.end());
    for (std::int64_t i = whole.offsets[j]; i < whole.offsets[j + 1]; ++i) {
      const auto k =
          std::lower_bound(distinct.begin(), distinct.end(), whole.vertices[i]) - distinct.begin();
      for (auto e = rows.indptr[k]; e < rows.indptr[k + 1]; ++e) {
        const vertex_t c = rows.indices[e];
        if (std::binary_search(sorted_sources.begin(), sorted_sources.end(), c))
          found.push_back({static_cast<std::int32_t>(i), c});
      }
    }
  }
  return found;
}

csr_matrix part_rows_from_entries(const segmented_vertices& whole, const segmented_vertices& part,
                                  std::vector<block_entry> entries, std::int64_t num_vertices) {
  std::sort(entries.begin(), entries.end(), [](const block_entry& a, const block_entry& b) {
    return std::pair(a.destination, a.column) < std::pair(b.destination, b.column);
  });
  csr_matrix rows;
  rows.rows = static_cast<std::int64_t>(part.vertices.size());
  rows.cols = num_vertices;
  rows.indptr.reserve(part.vertices.size() + 1);
  std::vector<std::pair<vertex_t, std::int64_t>> positions;  // (vertex, position in whole)
  for (std::int64_t j = 0; j < part.segments(); ++j) {
    positions.clear();
    for (std::int64_t i = whole.offsets[j]; i < whole.offsets[j + 1]; ++i)
      positions.emplace_back(whole.vertices[i], i);
    std::sort(positions.begin(), positions.end());
    for (const vertex_t v : part.segment(j)) {
      const auto at = std::lower_bound(positions.begin(), positions.end(),
                                       std::pair<vertex_t, std::int64_t>(v, 0));
      BULKGNN_EXPECTS(at != positions.end() && at->first == v,
                      "bulk_sampler: part vertex {} is not in its minibatch's frontier", v);
      const auto first = std::lower_bound(entries.begin(), entries.end(), at->second,
                                          [](const block_entry& e, std::int64_t destination) {
                                            return e.destination < destination;
                                          });
      bool has_self_loop = false;
      for (auto e = first; e != entries.end() && e->destination == at->second; ++e) {
        rows.indices.push_back(e->column);
        has_self_loop = has_self_loop || e->column == v;
      }
      if (!has_self_loop) rows.indices.push_back(v);
      rows.indptr.push_back(static_cast<edge_t>(rows.indices.size()));
    }
  }
  return rows;
}

}  // namespace bulkgnn::sampler::detail
