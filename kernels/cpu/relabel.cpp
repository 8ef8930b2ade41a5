#include <tbb/enumerable_thread_specific.h>

#include <algorithm>
#include <tuple>

#include "common.hpp"
#include "kernels.hpp"

namespace bulkgnn::kernels::cpu {
namespace {

std::int64_t largest_segment(const segmented_vertices& s) {
  std::int64_t largest = 0;
  for (std::int64_t j = 0; j < s.segments(); ++j) largest = std::max(largest, s.size(j));
  return largest;
}

// Relabels segment j: writes the local id of each of its sampled entries
// into `local` and returns the segment's sources that are not destinations,
// in order of first appearance.
std::vector<vertex_t> relabel_segment(const segmented_vertices& destinations, csr_view sampled,
                                      std::int64_t j, std::span<vertex_t> local, vertex_map& ids) {
  const auto first =
      static_cast<std::size_t>(sampled.indptr[destinations.offsets[j]] - sampled.indptr.front());
  const auto last = static_cast<std::size_t>(sampled.indptr[destinations.offsets[j + 1]] -
                                             sampled.indptr.front());
  const auto entries = sampled.indices.subspan(first, last - first);
  const auto own = destinations.segment(j);
  ids.reset(own.size() + entries.size());
  for (std::size_t k = 0; k < own.size(); ++k) ids.try_emplace(own[k], static_cast<vertex_t>(k));
  std::vector<vertex_t> others;
  auto next = static_cast<vertex_t>(own.size());
  constexpr std::size_t ahead = 16;
  for (std::size_t e = 0; e < entries.size(); ++e) {
    if (e + ahead < entries.size()) __builtin_prefetch(ids.probe_address(entries[e + ahead]));
    const auto [id, inserted] = ids.try_emplace(entries[e], next);
    if (inserted) {
      others.push_back(entries[e]);
      ++next;
    }
    local[first + e] = id;
  }
  return others;
}

}  // namespace

relabelled_blocks relabel_by_segment(const segmented_vertices& destinations, csr_view sampled) {
  relabelled_blocks out;
  auto& blocks = out.blocks;
  blocks.rows = sampled.rows;
  blocks.indptr.resize(sampled.indptr.size());
  std::transform(sampled.indptr.begin(), sampled.indptr.end(), blocks.indptr.begin(),
                 [&](edge_t e) { return e - sampled.indptr.front(); });
  blocks.indices.resize(sampled.indices.size());
  blocks.values.assign(sampled.values.begin(), sampled.values.end());

  const std::int64_t segments = destinations.segments();
  std::vector<std::vector<vertex_t>> others(static_cast<std::size_t>(segments));
  tbb::enumerable_thread_specific<vertex_map> maps;
  tbb::parallel_for(std::int64_t{0}, segments, [&](std::int64_t j) {
    others[j] = relabel_segment(destinations, sampled, j, blocks.indices, maps.local());
  });

  auto& sources = out.sources;
  sources.offsets.resize(static_cast<std::size_t>(segments) + 1);
  for (std::int64_t j = 0; j < segments; ++j)
    sources.offsets[j + 1] =
        sources.offsets[j] + destinations.size(j) + static_cast<std::int64_t>(others[j].size());
  sources.vertices.resize(static_cast<std::size_t>(sources.offsets.back()));
  tbb::parallel_for(std::int64_t{0}, segments, [&](std::int64_t j) {
    const auto own = destinations.segment(j);
    const auto at =
        std::copy(own.begin(), own.end(), sources.vertices.begin() + sources.offsets[j]);
    std::copy(others[j].begin(), others[j].end(), at);
  });
  blocks.cols = largest_segment(sources);
  return out;
}

namespace {

// Sorts one output row by (local column, storage position): repeated entries
// keep a's order and the added self loop, stored nowhere in a, comes last.
struct block_entry {
  vertex_t column;
  edge_t position;
  float value;
  bool operator<(const block_entry& other) const {
    return std::tie(column, position) < std::tie(other.column, other.position);
  }
};

class block_extractor {
 public:
  block_extractor(csr_view a, const segmented_vertices& cols, std::span<const float> column_scale,
                  bool add_self_loops)
      : a_(a), cols_(cols), scale_(column_scale), self_loops_(add_self_loops) {}

  // Builds segment j's map from global column id to local position.
  void index_segment(std::int64_t j, vertex_map& positions) const {
    const auto segment = cols_.segment(j);
    positions.reset(segment.size());
    for (std::size_t p = 0; p < segment.size(); ++p)
      positions.try_emplace(segment[p], static_cast<vertex_t>(p));
  }

  // Entries of the output row of vertex u, in a's storage order, then its
  // self loop if one is added.
  template <class Visit>
  void for_each_entry(vertex_t u, std::int64_t j, const vertex_map& positions,
                      Visit&& visit) const {
    const auto neighbours = a_.row(u);
    bool stores_self = false;
    for (std::size_t e = 0; e < neighbours.size(); ++e) {
      stores_self |= neighbours[e] == u;
      const vertex_t p = positions.find(neighbours[e]);
      if (p == vertex_map::absent) continue;
      const float value = a_.weighted() ? a_.row_values(u)[e] : 1.0f;
      visit(block_entry{p, static_cast<edge_t>(e), value * scale(j, p)});
    }
    if (!self_loops_ || stores_self) return;
    const vertex_t p = positions.find(u);
    if (p != vertex_map::absent)
      visit(block_entry{p, static_cast<edge_t>(neighbours.size()), 1.0f * scale(j, p)});
  }

 private:
  [[nodiscard]] float scale(std::int64_t j, vertex_t p) const {
    return scale_[cols_.offsets[j] + p];
  }

  csr_view a_;
  const segmented_vertices& cols_;
  std::span<const float> scale_;
  bool self_loops_;
};

}  // namespace

csr_matrix extract_blocks(csr_view a, const segmented_vertices& rows,
                          const segmented_vertices& cols, std::span<const float> column_scale,
                          bool add_self_loops) {
  const block_extractor extractor(a, cols, column_scale, add_self_loops);
  std::vector<vertex_map> positions(static_cast<std::size_t>(cols.segments()));
  tbb::parallel_for(std::int64_t{0}, cols.segments(),
                    [&](std::int64_t j) { extractor.index_segment(j, positions[j]); });
  // Output row i belongs to the segment whose offsets bracket it.
  const auto segment_of = [&](std::int64_t i) {
    return std::upper_bound(rows.offsets.begin(), rows.offsets.end(), i) - rows.offsets.begin() - 1;
  };
  tbb::enumerable_thread_specific<std::vector<block_entry>> scratches;
  return build_rows(
      static_cast<std::int64_t>(rows.vertices.size()), largest_segment(cols),
      [&](std::int64_t i, std::vector<vertex_t>& columns, std::vector<float>& values) {
        const auto j = segment_of(i);
        auto& entries = scratches.local();
        entries.clear();
        extractor.for_each_entry(rows.vertices[i], j, positions[j],
                                 [&](const block_entry& entry) { entries.push_back(entry); });
        std::sort(entries.begin(), entries.end());
        for (const auto& entry : entries) {
          columns.push_back(entry.column);
          values.push_back(entry.value);
        }
      });
}

csr_matrix columns_as_vertices(csr_view blocks, std::span<const std::int64_t> row_offsets,
                               const segmented_vertices& sources, std::int64_t num_vertices) {
  csr_matrix out;
  out.rows = blocks.rows;
  out.cols = num_vertices;
  out.indptr.assign(blocks.indptr.begin(), blocks.indptr.end());
  if (blocks.weighted()) out.values.assign(blocks.values.begin(), blocks.values.end());
  out.indices.resize(blocks.indices.size());
  tbb::parallel_for(std::size_t{0}, row_offsets.size() - 1, [&](std::size_t j) {
    const auto segment = sources.segment(static_cast<std::int64_t>(j));
    // Entries are indexed from indptr[0], which a view may place above 0.
    const edge_t base = blocks.indptr.front();
    for (auto e = blocks.indptr[row_offsets[j]] - base;
         e < blocks.indptr[row_offsets[j + 1]] - base; ++e)
      out.indices[e] = segment[blocks.indices[e]];
  });
  return out;
}

buffer<float> lookup_entries(csr_view a, std::span<const vertex_t> rows,
                             const segmented_vertices& cols) {
  buffer<float> out(cols.vertices.size());
  tbb::parallel_for(std::int64_t{0}, cols.segments(), [&](std::int64_t j) {
    const auto columns = a.row(rows[j]);
    for (auto k = cols.offsets[j]; k < cols.offsets[j + 1]; ++k) {
      const auto at = std::lower_bound(columns.begin(), columns.end(), cols.vertices[k]);
      if (at == columns.end() || *at != cols.vertices[k]) continue;
      const auto e = at - columns.begin();
      out[k] = a.weighted() ? a.row_values(rows[j])[e] : 1.0f;
    }
  });
  return out;
}

}  // namespace bulkgnn::kernels::cpu
