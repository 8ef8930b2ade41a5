#pragma once

#include "bulkgnn/sampler/sampler_table.hpp"

namespace bulkgnn::sampler {

// ShaDow-GNN's subgraphs (Zeng et al., "Decoupling the Depth and Scope of
// Graph Neural Networks", NeurIPS 2021), as DGL's ShaDowKHopSampler draws
// them: node-wise sampling from a minibatch's seeds for one hop per fanout,
// with the sage sampler's draws (the same streams, so the same vertices),
// then the subgraph of A induced on every vertex reached: all of A's edges
// among them, drawn or not. The model runs sampler_options.layers layers
// (default: one per hop) on that subgraph and reads the seeds' rows out: the
// subgraph's scope (the hops) and the model's depth are chosen apart, the
// paper's point. The minibatch holds what that
// computation reads: restrict_to_seeds of the minibatch whose every block is
// the induced subgraph (the seeds' layer its seeds' rows), so each block's
// rows are the subgraph's vertices within that many induced edges of a seed.
// (PyG's ShaDowKHopSampler instead gives each seed a subgraph of its own and
// batches them apart.)
[[nodiscard]] sampler_entry shadow_entry();

}  // namespace bulkgnn::sampler
