#pragma once

#include "bulkgnn/sampler/sampling_algorithm.hpp"

namespace bulkgnn::sampler {

// A sampler whose every layer runs on one subgraph per minibatch: the
// subgraph of A induced on a vertex set the sampler picks (ShaDow-GNN's
// reach, Cluster-GCN's clusters, GraphSAINT's draws), all of A's edges
// among them. Every layer
// on the whole subgraph would compute rows that the seeds never read, so
// each minibatch keeps what its seeds read: restrict_to_seeds of the
// minibatch whose every block is the induced subgraph (the seeds' layer its
// seeds' rows). That gives the seeds the same outputs, and lets a slice of
// the seeds be cut from it as from any minibatch.
class induced_subgraph_sampling : public sampling_algorithm {
 public:
  using sampling_algorithm::sampling_algorithm;

  [[nodiscard]] bulk_sample sample(std::uint32_t epoch, segmented_vertices seeds,
                                   std::span<const std::int64_t> minibatch_ids) final;
  // A slice of a minibatch's seeds shares the subgraph that all its seeds
  // span, so the part is cut from the whole minibatch (restrict_to_seeds),
  // which every rank samples.
  [[nodiscard]] bulk_sample sample_part(std::uint32_t epoch, segmented_vertices whole,
                                        segmented_vertices part,
                                        std::span<const std::int64_t> minibatch_ids,
                                        comm::communicator* ranks) final;

 protected:
  // The vertices each minibatch's subgraph is induced on: segment j starts
  // with seeds' segment j, in its order, and lists every vertex once. By
  // default the epoch plan's subgraphs (sampling_context::subgraphs: Cluster-
  // GCN's clusters, GraphSAINT's draws), each reordered to start with its
  // seeds.
  [[nodiscard]] virtual segmented_vertices subgraph_vertices(
      std::uint32_t epoch, const segmented_vertices& seeds,
      std::span<const std::int64_t> minibatch_ids);
  // A[V_j, V_j] for each minibatch's vertices V_j: one row per vertex, in
  // V_j's order, local column ids ascending, no values by default (stage
  // "induce"); a sampler whose blocks carry aggregation weights gives them
  // values.
  [[nodiscard]] virtual csr_matrix induced_subgraphs(const segmented_vertices& vertices);
};

}  // namespace bulkgnn::sampler
