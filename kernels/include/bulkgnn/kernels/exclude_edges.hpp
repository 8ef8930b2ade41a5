#pragma once

#include "bulkgnn/core/csr.hpp"
#include "bulkgnn/core/executor.hpp"
#include "bulkgnn/core/segmented.hpp"
#include "bulkgnn/core/types.hpp"

#include <cstdint>
#include <span>
#include <vector>

namespace bulkgnn::kernels {

// A directed edge source → destination as one sortable key: the destination
// (the row of the in-neighbour CSR that stores the edge) in the high half.
[[nodiscard]] constexpr std::uint64_t edge_key(vertex_t destination, vertex_t source) {
  return (static_cast<std::uint64_t>(static_cast<std::uint32_t>(destination)) << 32) |
         static_cast<std::uint32_t>(source);
}

// Per segment of a bulk (one minibatch each), the directed edges its sampled
// blocks must leave out: a link-prediction minibatch's own supervision
// edges, so that the model never reads the edge it is asked to predict.
struct excluded_edges {
  std::vector<std::uint64_t> keys;       // edge_key values, sorted within each segment
  std::vector<std::int64_t> offsets{0};  // segment j is keys[offsets[j], offsets[j + 1])

  [[nodiscard]] std::int64_t segments() const {
    return static_cast<std::int64_t>(offsets.size()) - 1;
  }
  // Appends a segment; `segment_keys` in any order, repeats allowed.
  void push_segment(std::vector<std::uint64_t> segment_keys);
};

// `drawn` without the entries that their segment excludes: row i holds the
// global source ids that frontier.vertices[i] drew, in the frontier segment
// that contains i, and entry u leaves when edge_key(frontier.vertices[i], u)
// is one of that segment's keys. Values leave with their entries; rows keep
// their order. DGL's exclude= does the same to a sampled frontier. Host back
// ends only so far.
[[nodiscard]] csr_matrix drop_excluded_edges(const executor& exec, csr_view drawn,
                                             const segmented_vertices& frontier,
                                             const excluded_edges& excluded);

}  // namespace bulkgnn::kernels
