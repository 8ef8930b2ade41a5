#include "saint_sampling.hpp"

#include "../src/induced_subgraph_sampling.hpp"
#include "bulkgnn/core/error.hpp"
#include "bulkgnn/sampler/saint_subgraphs.hpp"

namespace bulkgnn::sampler {

namespace {

class saint_sampling final : public induced_subgraph_sampling {
 public:
  using induced_subgraph_sampling::induced_subgraph_sampling;

 private:
  // Read from the plan's saint_subgraphs, which holds the graph and each
  // edge's normalised weight side by side.
  csr_matrix induced_subgraphs(const segmented_vertices& vertices) override {
    auto& c = context();
    const auto* saint = dynamic_cast<const saint_subgraphs*>(c.batching);
    BULKGNN_EXPECTS(saint != nullptr,
                    "sampler_options.kind {}: sample from an epoch plan made with the sampler's "
                    "saint_subgraphs",
                    c.options.kind);
    executor_stage stage(c.exec, c.times, c.device_log, "induce");
    return c.exec.run([&] { return saint->induced_subgraphs(vertices); });
  }
};

void check_saint_fanouts(const sampler_options& options) {
  for (const auto fanout : options.fanouts)
    BULKGNN_EXPECTS(fanout == -1,
                    "sampler_options.fanouts: the {} sampler runs every layer on all edges of a "
                    "drawn subgraph; give -1 per layer (e.g. -1,-1), got {}",
                    options.kind, fanout);
}

constexpr sampler_parameter steps_parameter{
    .name = "steps",
    .help = "GraphSAINT subgraphs per epoch (0: enough to touch every vertex about once)",
    .default_value = 0,
    .min = 0,
    .max = 1 << 20};
constexpr sampler_parameter coverage_parameter{
    .name = "coverage",
    .help =
        "GraphSAINT's normalisation is estimated from subgraphs holding coverage times the "
        "graph's vertices (PyG's sample_coverage)",
    .default_value = 100,
    .min = 1,
    .max = 1 << 20};

sampler_entry saint_entry(std::string_view name, std::string_view summary) {
  return {.name = name,
          .summary = summary,
          .fanout = fanout_unit::per_destination,
          .layer = "graph-conv",
          // The minibatches are trimmed to what the seeds read on the host.
          .host_only = true,
          .subgraph_batching = saint_batching,
          .draws_subgraphs = true,
          .keeps_batching = true,
          .parameters = {steps_parameter, coverage_parameter},
          .check = check_saint_fanouts,
          .make = make_sampling<saint_sampling>};
}

}  // namespace

sampler_entry saint_node_entry() {
  return saint_entry("saint-node",
                     "GraphSAINT node sampler (PyG's GraphSAINTNodeSampler): batch_size vertices "
                     "drawn ∝ degree, every layer on their induced subgraph, normalised");
}

sampler_entry saint_edge_entry() {
  return saint_entry("saint-edge",
                     "GraphSAINT edge sampler (PyG's GraphSAINTEdgeSampler): batch_size edges "
                     "drawn ∝ 1/deg(v) + 1/deg(u), every layer on their ends' induced subgraph");
}

sampler_entry saint_rw_entry() {
  auto entry = saint_entry("saint-rw",
                           "GraphSAINT random-walk sampler (PyG's GraphSAINTRandomWalkSampler): "
                           "walks of --walk-length from batch_size uniform roots, every layer on "
                           "the subgraph they visit");
  entry.parameters.insert(entry.parameters.begin(), {.name = "walk_length",
                                                     .help = "steps of each walk",
                                                     .default_value = 2,
                                                     .min = 1,
                                                     .max = 63});
  return entry;
}

}  // namespace bulkgnn::sampler
