#pragma once

#include "bulkgnn/core/types.hpp"

#include <cstdint>
#include <span>
#include <vector>

namespace bulkgnn::sampler {

// One epoch of minibatches that each run on a subgraph: minibatch j's seeds
// are seeds[seed_offsets[j] .. seed_offsets[j + 1]), and the vertices its
// subgraph is induced on (its seeds among them, ascending) are
// vertices[vertex_offsets[j] .. vertex_offsets[j + 1]).
struct batched_subgraphs {
  std::vector<vertex_t> seeds;
  std::vector<std::int64_t> seed_offsets{0};
  std::vector<vertex_t> vertices;
  std::vector<std::int64_t> vertex_offsets{0};

  // Appends a minibatch.
  void push(std::span<const vertex_t> minibatch_seeds,
            std::span<const vertex_t> minibatch_vertices);
};

// How a sampler whose minibatches are subgraphs rather than batches of
// seeds (sampler_entry::subgraph_batching) cuts an epoch: Cluster-GCN
// batches METIS clusters (clusters.hpp), GraphSAINT draws a subgraph per
// minibatch (saint_subgraphs.hpp). An epoch_plan made with one lists its
// minibatches (epoch_plan::subgraph), and the sampler reads it back from the
// plan (sampling_context::batching). Every call is a function of its
// arguments alone, so each rank and each pass plans the same epoch.
class subgraph_batches {
 public:
  virtual ~subgraph_batches() = default;

  [[nodiscard]] virtual std::int64_t num_vertices() const = 0;
  // Minibatches an epoch over the training vertices `train` has; batch_size
  // is the sampler's unit (clusters, or a GraphSAINT sampler's budget).
  [[nodiscard]] virtual std::int64_t minibatch_count(std::span<const vertex_t> train,
                                                     std::int64_t batch_size) const = 0;
  [[nodiscard]] virtual batched_subgraphs batch(std::span<const vertex_t> train,
                                                std::int64_t batch_size, std::uint32_t seed,
                                                std::uint32_t epoch) const = 0;
  // The weight of each vertex's loss term when it is a seed (GraphSAINT's
  // loss normalisation), indexed by vertex id; empty where a minibatch's
  // loss is the mean over its seeds.
  [[nodiscard]] virtual std::span<const float> loss_weights() const { return {}; }
};

}  // namespace bulkgnn::sampler
