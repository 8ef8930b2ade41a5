#pragma once

#include "bulkgnn/sampler/sampler_table.hpp"

namespace bulkgnn::sampler {

// Cluster-GCN (Chiang et al., "Cluster-GCN: An Efficient Algorithm for
// Training Deep and Large Graph Convolutional Networks", KDD 2019), as PyG's
// ClusterLoader and DGL's ClusterGCNSampler batch it: the graph is cut into
// METIS clusters once (the `clusters` parameter), an epoch shuffles them and
// takes batch_size clusters per minibatch (epoch_plan's clustered plan), and
// every layer runs on the subgraph induced on the minibatch's clusters, the
// edges between its clusters included. Its seeds are the training vertices
// of its clusters, and the minibatch keeps what they read (as ShaDow's,
// induced_subgraph_sampling.hpp). No randomness past the plan's shuffle:
// the fanouts are -1, one per layer.
[[nodiscard]] sampler_entry cluster_gcn_entry();

}  // namespace bulkgnn::sampler
