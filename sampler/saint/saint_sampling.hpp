#pragma once

#include "bulkgnn/sampler/sampler_table.hpp"

namespace bulkgnn::sampler {

// GraphSAINT's node, edge and random-walk samplers (PyG's
// GraphSAINT{Node,Edge,RandomWalk}Sampler; saint_subgraphs.hpp draws the
// subgraphs and estimates the normalisation): every layer runs on the
// subgraph induced on a minibatch's drawn vertices, its blocks' values the
// normalised aggregation weights, and the trainer weighs each seed's loss
// by the normalisation (subgraph_batches::loss_weights). batch_size is the
// budget: vertices, edges or walk roots per subgraph.
[[nodiscard]] sampler_entry saint_node_entry();
[[nodiscard]] sampler_entry saint_edge_entry();
[[nodiscard]] sampler_entry saint_rw_entry();

}  // namespace bulkgnn::sampler
