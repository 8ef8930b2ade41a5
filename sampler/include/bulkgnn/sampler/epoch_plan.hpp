#pragma once

#include "bulkgnn/core/types.hpp"
#include "bulkgnn/sampler/subgraph_batches.hpp"

#include <cstdint>
#include <memory>
#include <span>
#include <vector>

namespace bulkgnn::sampler {

// Minibatches of batch_size (> 0) that `seeds` (> 0) vertices make, the last
// one possibly smaller.
[[nodiscard]] constexpr std::int64_t minibatch_count(std::int64_t seeds, std::int64_t batch_size) {
  return (seeds - 1) / batch_size + 1;
}

// Minibatches an epoch_plan of `seeds` has (0 without seeds): batch_size
// seeds each, or as `batching` cuts the epoch where given.
[[nodiscard]] std::int64_t minibatch_count(std::span<const vertex_t> seeds, std::int64_t batch_size,
                                           const subgraph_batches* batching);

// The seed vertices of every minibatch of one epoch, in an order shuffled by
// a stream keyed on (seed, epoch) alone: the training vertices cut into
// consecutive minibatches of batch_size (the last one may be smaller); or,
// with a subgraph_batches (Cluster-GCN, GraphSAINT), the minibatches it
// cuts, each with the vertices of its subgraph (subgraph()).
class epoch_plan {
 public:
  // `batching` may be null.
  epoch_plan(std::span<const vertex_t> train, std::int64_t batch_size, std::uint32_t seed,
             std::uint32_t epoch, std::shared_ptr<const subgraph_batches> batching = nullptr);

  [[nodiscard]] std::uint32_t epoch() const { return epoch_; }
  [[nodiscard]] std::int64_t num_minibatches() const {
    return static_cast<std::int64_t>(offsets_.size()) - 1;
  }
  [[nodiscard]] std::span<const vertex_t> seeds(std::int64_t minibatch) const;
  // What cut its minibatches into subgraphs; null for batches of seeds.
  [[nodiscard]] const subgraph_batches* batching() const { return batching_.get(); }
  // With a batching, a minibatch's subgraph: its vertices, ascending.
  [[nodiscard]] std::span<const vertex_t> subgraph(std::int64_t minibatch) const;

 private:
  std::vector<vertex_t> order_;
  std::vector<std::int64_t> offsets_;
  std::vector<vertex_t> subgraph_vertices_;
  std::vector<std::int64_t> subgraph_offsets_;
  std::shared_ptr<const subgraph_batches> batching_;
  std::uint32_t epoch_;
};

}  // namespace bulkgnn::sampler
