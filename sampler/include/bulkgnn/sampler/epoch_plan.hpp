#pragma once

#include "bulkgnn/core/types.hpp"
#include "bulkgnn/sampler/clusters.hpp"

#include <cstdint>
#include <span>
#include <vector>

namespace bulkgnn::sampler {

// Minibatches of batch_size (> 0) that `seeds` (> 0) vertices make, the last
// one possibly smaller.
[[nodiscard]] constexpr std::int64_t minibatch_count(std::int64_t seeds, std::int64_t batch_size) {
  return (seeds - 1) / batch_size + 1;
}

// Minibatches an epoch_plan of `seeds` has (0 without seeds): batch_size
// seeds each, or with `clusters` batch_size clusters holding a seed each.
[[nodiscard]] std::int64_t minibatch_count(std::span<const vertex_t> seeds, std::int64_t batch_size,
                                           const vertex_clusters* clusters);

// The seed vertices of every minibatch of one epoch, in an order shuffled by
// a stream keyed on (seed, epoch) alone:
// - the training vertices cut into consecutive minibatches of batch_size
//   (the last one may be smaller);
// - or, with clusters (Cluster-GCN), batch_size clusters per minibatch: its
//   seeds are the training vertices of its clusters, and it runs on all of
//   its clusters' vertices (subgraph()). The clusters holding training
//   vertices are shuffled and cut into batches; a cluster without one goes
//   with the cluster holding one that it has the most edges to (one linked
//   to none of them goes round-robin over them, and its vertices then feed
//   no seed), so that every vertex is in one minibatch per epoch and no
//   minibatch is without seeds.
class epoch_plan {
 public:
  // With `clusters` (may be null), the clustered plan.
  epoch_plan(std::span<const vertex_t> train, std::int64_t batch_size, std::uint32_t seed,
             std::uint32_t epoch, const vertex_clusters* clusters = nullptr);

  [[nodiscard]] std::uint32_t epoch() const { return epoch_; }
  [[nodiscard]] std::int64_t num_minibatches() const {
    return static_cast<std::int64_t>(offsets_.size()) - 1;
  }
  [[nodiscard]] std::span<const vertex_t> seeds(std::int64_t minibatch) const;
  // Whether its minibatches are batches of clusters.
  [[nodiscard]] bool clustered() const { return !subgraph_offsets_.empty(); }
  // A clustered plan's minibatch: every vertex of its clusters, ascending.
  [[nodiscard]] std::span<const vertex_t> subgraph(std::int64_t minibatch) const;

 private:
  std::vector<vertex_t> order_;
  std::vector<std::int64_t> offsets_;
  std::vector<vertex_t> subgraph_vertices_;
  std::vector<std::int64_t> subgraph_offsets_;
  std::uint32_t epoch_;

  void batch_seeds(std::int64_t batch_size);
  void batch_clusters(std::span<const vertex_t> train, const vertex_clusters& clusters,
                      std::int64_t batch_size, std::uint32_t seed);
};

}  // namespace bulkgnn::sampler
