#include <algorithm>
#include <map>
#include <tuple>
#include <vector>

#include "kernels.hpp"

namespace bulkgnn::kernels::reference {
namespace {

// Global id -> local id in one segment: destinations first, in their order,
// then every other sampled column in order of first appearance.
std::map<vertex_t, vertex_t> local_ids(std::span<const vertex_t> destinations, csr_view sampled,
                                       std::int64_t first_row) {
  std::map<vertex_t, vertex_t> local;
  for (const vertex_t v : destinations) local.emplace(v, static_cast<vertex_t>(local.size()));
  for (std::size_t r = 0; r < destinations.size(); ++r)
    for (const vertex_t v : sampled.row(first_row + static_cast<std::int64_t>(r)))
      local.emplace(v, static_cast<vertex_t>(local.size()));
  return local;
}

}  // namespace

relabelled_blocks relabel_by_segment(const segmented_vertices& destinations, csr_view sampled) {
  relabelled_blocks out;
  out.blocks.rows = sampled.rows;
  for (std::int64_t j = 0; j < destinations.segments(); ++j) {
    const auto local = local_ids(destinations.segment(j), sampled, destinations.offsets[j]);
    std::vector<vertex_t> sources(local.size());
    for (const auto& [global, id] : local) sources[id] = global;
    out.sources.push_segment(sources);
    out.blocks.cols =
        std::max<std::int64_t>(out.blocks.cols, static_cast<std::int64_t>(local.size()));
    for (std::int64_t r = destinations.offsets[j]; r < destinations.offsets[j + 1]; ++r) {
      for (const vertex_t v : sampled.row(r)) out.blocks.indices.push_back(local.at(v));
      if (sampled.weighted()) {
        const auto values = sampled.row_values(r);
        out.blocks.values.insert(out.blocks.values.end(), values.begin(), values.end());
      }
      out.blocks.indptr.push_back(static_cast<edge_t>(out.blocks.indices.size()));
    }
  }
  return out;
}

csr_matrix extract_blocks(csr_view a, const segmented_vertices& rows,
                          const segmented_vertices& cols, std::span<const float> column_scale,
                          bool add_self_loops) {
  csr_matrix out;
  out.rows = static_cast<std::int64_t>(rows.vertices.size());
  for (std::int64_t j = 0; j < cols.segments(); ++j) out.cols = std::max(out.cols, cols.size(j));
  for (std::int64_t j = 0; j < rows.segments(); ++j) {
    std::map<vertex_t, vertex_t> position;
    for (const vertex_t v : cols.segment(j))
      position.emplace(v, static_cast<vertex_t>(position.size()));
    for (const vertex_t u : rows.segment(j)) {
      // (local column, storage position, value); the position orders repeated
      // entries and the self loop, which a does not store, sorts last.
      std::vector<std::tuple<vertex_t, edge_t, float>> entries;
      const auto neighbours = a.row(u);
      for (std::size_t e = 0; e < neighbours.size(); ++e) {
        const auto found = position.find(neighbours[e]);
        if (found == position.end()) continue;
        const float value = a.weighted() ? a.row_values(u)[e] : 1.0f;
        entries.emplace_back(found->second, static_cast<edge_t>(e),
                             value * column_scale[cols.offsets[j] + found->second]);
      }
      const bool stores_self =
          std::find(neighbours.begin(), neighbours.end(), u) != neighbours.end();
      if (add_self_loops && !stores_self && position.contains(u)) {
        const vertex_t p = position.at(u);
        entries.emplace_back(p, static_cast<edge_t>(neighbours.size()),
                             1.0f * column_scale[cols.offsets[j] + p]);
      }
      std::sort(entries.begin(), entries.end());
      for (const auto& [p, e, value] : entries) {
        out.indices.push_back(p);
        out.values.push_back(value);
      }
      out.indptr.push_back(static_cast<edge_t>(out.indices.size()));
    }
  }
  return out;
}

csr_matrix columns_as_vertices(csr_view blocks, std::span<const std::int64_t> row_offsets,
                               const segmented_vertices& sources, std::int64_t num_vertices) {
  csr_matrix out;
  out.rows = blocks.rows;
  out.cols = num_vertices;
  out.indptr.assign(blocks.indptr.begin(), blocks.indptr.end());
  if (blocks.weighted()) out.values.assign(blocks.values.begin(), blocks.values.end());
  const edge_t base = blocks.indptr.front();
  for (std::int64_t j = 0; j + 1 < static_cast<std::int64_t>(row_offsets.size()); ++j)
    for (auto e = blocks.indptr[row_offsets[j]]; e < blocks.indptr[row_offsets[j + 1]]; ++e)
      out.indices.push_back(sources.segment(j)[blocks.indices[e - base]]);
  return out;
}

buffer<float> lookup_entries(csr_view a, std::span<const vertex_t> rows,
                             const segmented_vertices& cols) {
  std::vector<float> out;
  for (std::int64_t j = 0; j < cols.segments(); ++j) {
    const auto columns = a.row(rows[j]);
    for (const vertex_t v : cols.segment(j)) {
      float value = 0.0f;
      for (std::size_t e = 0; e < columns.size(); ++e)
        if (columns[e] == v) value = a.weighted() ? a.row_values(rows[j])[e] : 1.0f;
      out.push_back(value);
    }
  }
  return out;
}

}  // namespace bulkgnn::kernels::reference
