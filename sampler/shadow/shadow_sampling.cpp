#include "shadow_sampling.hpp"

#include "../node_wise/node_wise_sampling.hpp"
#include "../src/induced_subgraph_sampling.hpp"

#include <memory>
#include <utility>

namespace bulkgnn::sampler {

namespace {

class shadow_sampling final : public induced_subgraph_sampling {
 public:
  explicit shadow_sampling(sampling_context& context)
      : induced_subgraph_sampling(context), reach_(node_wise_entry().make(context)) {}

 private:
  // Every vertex that sage's draws reach: the last layer's sources, which
  // list the seeds first.
  segmented_vertices subgraph_vertices(std::uint32_t epoch, const segmented_vertices& seeds,
                                       std::span<const std::int64_t> minibatch_ids) override {
    bulk_sample reached = reach_->sample(epoch, seeds, minibatch_ids);
    return std::move(reached.layers.back().sources);
  }

  std::unique_ptr<sampling_algorithm> reach_;
};

}  // namespace

sampler_entry shadow_entry() {
  return {.name = "shadow",
          .aliases = {"shadow-khop"},
          .summary =
              "ShaDow-GNN (DGL's ShaDowKHopSampler): the subgraph induced on the vertices "
              "that sage's fanouts reach, every layer on all of its edges",
          .fanout = fanout_unit::per_destination,
          .layer = "sage",
          // The minibatches are trimmed to what the seeds read on the host.
          .host_only = true,
          .any_depth = true,
          .takes_replacement = true,
          .takes_weights = true,
          .make = make_sampling<shadow_sampling>};
}

}  // namespace bulkgnn::sampler
