#include "bulkgnn/distributed/partition.hpp"

#include "bulkgnn/core/error.hpp"

#include <metis.h>

#include <algorithm>
#include <limits>

namespace bulkgnn::distributed {

vertex_partition partition_from_owners(std::vector<std::int32_t> owner, int parts,
                                       relabelling maps) {
  BULKGNN_EXPECTS(parts >= 1, "a partition needs at least one part, got {}", parts);
  vertex_partition p;
  p.parts = parts;
  p.owner = std::move(owner);
  p.local_index.resize(p.owner.size());
  std::vector<std::int64_t> sizes(static_cast<std::size_t>(parts), 0);
  for (std::size_t v = 0; v < p.owner.size(); ++v) {
    BULKGNN_ASSERT(p.owner[v] >= 0 && p.owner[v] < parts);
    p.local_index[v] = static_cast<vertex_t>(sizes[p.owner[v]]++);
  }
  p.part_offsets.assign(static_cast<std::size_t>(parts) + 1, 0);
  for (int q = 0; q < parts; ++q) p.part_offsets[q + 1] = p.part_offsets[q] + sizes[q];
  if (maps == relabelling::by_vertex) return p;
  p.old_id.resize(p.owner.size());
  for (std::size_t v = 0; v < p.owner.size(); ++v)
    p.old_id[p.new_id(static_cast<vertex_t>(v))] = static_cast<vertex_t>(v);
  return p;
}

vertex_partition block_partition(std::int64_t num_vertices, int parts) {
  BULKGNN_EXPECTS(parts >= 1, "a partition needs at least one part, got {}", parts);
  const std::int64_t block = std::max<std::int64_t>(1, (num_vertices + parts - 1) / parts);
  std::vector<std::int32_t> owner(static_cast<std::size_t>(num_vertices));
  for (std::int64_t v = 0; v < num_vertices; ++v)
    owner[v] = static_cast<std::int32_t>(std::min<std::int64_t>(v / block, parts - 1));
  return partition_from_owners(std::move(owner), parts);
}

namespace {

// METIS wants an undirected graph without self loops: A + Aᵀ.
struct metis_graph {
  std::vector<idx_t> xadj{0};
  std::vector<idx_t> adjncy;
};

metis_graph symmetrised(csr_view graph) {
  const auto n = graph.rows;
  std::vector<std::vector<idx_t>> neighbours(static_cast<std::size_t>(n));
  for (std::int64_t u = 0; u < n; ++u)
    for (const vertex_t v : graph.row(u)) {
      if (v == u) continue;
      neighbours[u].push_back(v);
      neighbours[v].push_back(static_cast<idx_t>(u));
    }
  metis_graph g;
  for (auto& list : neighbours) {
    std::sort(list.begin(), list.end());
    list.erase(std::unique(list.begin(), list.end()), list.end());
    g.adjncy.insert(g.adjncy.end(), list.begin(), list.end());
    g.xadj.push_back(static_cast<idx_t>(g.adjncy.size()));
  }
  return g;
}

}  // namespace

vertex_partition metis_partition(csr_view graph, int parts, int seed) {
  BULKGNN_EXPECTS(parts >= 1, "cluster_options.partition metis needs at least one part, got {}",
                  parts);
  const auto n = graph.rows;
  if (parts == 1 || n == 0) return block_partition(n, parts);
  BULKGNN_EXPECTS(n <= std::numeric_limits<idx_t>::max(), "graph too large for METIS");
  auto g = symmetrised(graph);
  idx_t vertices = static_cast<idx_t>(n);
  idx_t constraints = 1;
  idx_t k = parts;
  idx_t cut = 0;
  idx_t options[METIS_NOPTIONS];
  METIS_SetDefaultOptions(options);
  options[METIS_OPTION_SEED] = seed;
  options[METIS_OPTION_NUMBERING] = 0;
  std::vector<idx_t> part(static_cast<std::size_t>(n));
  const int status =
      METIS_PartGraphKway(&vertices, &constraints, g.xadj.data(), g.adjncy.data(), nullptr, nullptr,
                          nullptr, &k, nullptr, nullptr, options, &cut, part.data());
  BULKGNN_EXPECTS(status == METIS_OK, "METIS_PartGraphKway failed with status {}", status);
  return partition_from_owners(std::vector<std::int32_t>(part.begin(), part.end()), parts);
}

vertex_partition make_partition(const std::string& method, csr_view graph, int parts, int seed) {
  if (method == "block") return block_partition(graph.rows, parts);
  if (method == "metis") return metis_partition(graph, parts, seed);
  throw option_error("cluster_options.partition must be block or metis; got '" + method + "'");
}

edge_t edge_cut(csr_view graph, const vertex_partition& partition) {
  edge_t cut = 0;
  for (std::int64_t u = 0; u < graph.rows; ++u)
    for (const vertex_t v : graph.row(u)) cut += partition.owner[u] != partition.owner[v];
  return cut;
}

}  // namespace bulkgnn::distributed
