#include "cluster_gcn_sampling.hpp"

#include "../src/induced_subgraph_sampling.hpp"
#include "bulkgnn/core/error.hpp"
#include "bulkgnn/sampler/clusters.hpp"

namespace bulkgnn::sampler {

namespace {

void check_fanouts(const sampler_options& options) {
  for (const auto fanout : options.fanouts)
    BULKGNN_EXPECTS(fanout == -1,
                    "sampler_options.fanouts: the cluster-gcn sampler runs every layer on all "
                    "edges among a minibatch's clusters; give -1 per layer (e.g. -1,-1), got {}",
                    fanout);
}

}  // namespace

sampler_entry cluster_gcn_entry() {
  return {.name = "cluster-gcn",
          .aliases = {"cluster"},
          .summary =
              "Cluster-GCN (PyG's ClusterLoader, DGL's ClusterGCNSampler): batch_size "
              "METIS clusters per minibatch, every layer on the subgraph they induce",
          .fanout = fanout_unit::per_destination,
          .layer = "sage",
          // The minibatches are trimmed to what the seeds read on the host.
          .host_only = true,
          .subgraph_batching = metis_clusters,
          .keeps_batching = true,
          .parameters = {{.name = "clusters",
                          .help = "METIS clusters of the graph (0: one per 150 vertices, as "
                                  "PyG's Reddit and products examples)",
                          .default_value = 0,
                          .min = 0,
                          .max = 1 << 24}},
          .check = check_fanouts,
          .make = make_sampling<induced_subgraph_sampling>};
}

}  // namespace bulkgnn::sampler
