#pragma once

#include "bulkgnn/core/csr.hpp"

#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace bulkgnn::distributed {

// Which part owns each vertex. Parts are also a relabelling: new id =
// part_offsets[owner] + position of the vertex within its part (ascending
// old id), so each part is one contiguous range of new ids, as block-row and
// 2D grids need. Sampling keeps the original ids (random streams are keyed
// by them, so every partition gives the same minibatches); the relabelling is
// only used to lay out shards.
struct vertex_partition {
  int parts = 1;
  std::vector<std::int32_t> owner;            // by vertex
  std::vector<vertex_t> local_index;          // position within its part
  std::vector<std::int64_t> part_offsets{0};  // parts + 1
  std::vector<vertex_t> old_id;               // by new id (empty: relabelling::by_vertex)

  [[nodiscard]] std::int64_t num_vertices() const {
    return static_cast<std::int64_t>(owner.size());
  }
  [[nodiscard]] std::int64_t part_size(int p) const {
    return part_offsets[p + 1] - part_offsets[p];
  }
  [[nodiscard]] vertex_t new_id(vertex_t v) const {
    return static_cast<vertex_t>(part_offsets[owner[v]] + local_index[v]);
  }
};

// Which maps of the relabelling a partition holds: both ways, or only from
// vertex to new id (owner and local_index), 4 bytes per vertex less, for
// ranks that never look a vertex up by its new id (those that read their part
// of a partitioned dataset).
enum class relabelling { both_ways, by_vertex };

// Builds the relabelling from an owner per vertex (each in [0, parts)).
[[nodiscard]] vertex_partition partition_from_owners(std::vector<std::int32_t> owner, int parts,
                                                     relabelling maps = relabelling::both_ways);

// Contiguous ranges of ceil(n / parts) vertices (the last ones shorter).
[[nodiscard]] vertex_partition block_partition(std::int64_t num_vertices, int parts);

// METIS k-way partition minimising the edge cut of the symmetrised graph,
// with parts balanced in vertex count (METIS' default 3% imbalance).
// Deterministic for a given seed.
[[nodiscard]] vertex_partition metis_partition(csr_view graph, int parts, int seed = 0);

// "block" or "metis"; option_error naming --partition otherwise.
[[nodiscard]] vertex_partition make_partition(const std::string& method, csr_view graph, int parts,
                                              int seed);

// Stored entries of `graph` whose row and column have different owners.
[[nodiscard]] edge_t edge_cut(csr_view graph, const vertex_partition& partition);

}  // namespace bulkgnn::distributed
