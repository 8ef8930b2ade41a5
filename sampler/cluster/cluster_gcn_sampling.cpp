#include "cluster_gcn_sampling.hpp"

#include "../src/induced_subgraph_sampling.hpp"
#include "bulkgnn/core/error.hpp"

#include <algorithm>
#include <vector>

namespace bulkgnn::sampler {

namespace {

class cluster_gcn_sampling final : public induced_subgraph_sampling {
 public:
  using induced_subgraph_sampling::induced_subgraph_sampling;

 private:
  // The seeds, then the rest of the minibatch's clusters in ascending id.
  segmented_vertices subgraph_vertices(std::uint32_t, const segmented_vertices& seeds,
                                       std::span<const std::int64_t>) override {
    const segmented_vertices* clusters = context().subgraphs;
    BULKGNN_EXPECTS(clusters != nullptr && clusters->segments() == seeds.segments(),
                    "sampler_options.kind cluster-gcn: its minibatches are batches of clusters; "
                    "sample them from an epoch plan made with the graph's vertex_clusters");
    segmented_vertices vertices;
    std::vector<vertex_t> sorted_seeds;
    for (std::int64_t j = 0; j < seeds.segments(); ++j) {
      const auto mine = seeds.segment(j);
      const auto all = clusters->segment(j);
      sorted_seeds.assign(mine.begin(), mine.end());
      std::sort(sorted_seeds.begin(), sorted_seeds.end());
      BULKGNN_EXPECTS(
          std::includes(all.begin(), all.end(), sorted_seeds.begin(), sorted_seeds.end()),
          "cluster-gcn: minibatch {} has seeds outside its clusters", j);
      std::vector<vertex_t> segment(mine.begin(), mine.end());
      std::set_difference(all.begin(), all.end(), sorted_seeds.begin(), sorted_seeds.end(),
                          std::back_inserter(segment));
      vertices.push_segment(segment);
    }
    return vertices;
  }
};

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
          .batches_clusters = true,
          .parameters = {{.name = "clusters",
                          .help = "METIS clusters of the graph (0: one per 150 vertices, as "
                                  "PyG's Reddit and products examples)",
                          .default_value = 0,
                          .min = 0,
                          .max = 1 << 24}},
          .check = check_fanouts,
          .make = make_sampling<cluster_gcn_sampling>};
}

}  // namespace bulkgnn::sampler
