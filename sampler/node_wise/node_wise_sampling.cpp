#include "node_wise_sampling.hpp"

namespace bulkgnn::sampler {

namespace {

class node_wise_sampling final : public per_destination_sampling {
 public:
  using per_destination_sampling::per_destination_sampling;

 private:
  sampled_layer sample_hop(const segmented_vertices& frontier,
                           std::span<const std::int64_t> minibatch_ids, std::uint32_t epoch,
                           std::uint32_t hop) override {
    auto& c = context();
    const auto minibatch_of_row = minibatch_of_rows(frontier, minibatch_ids);
    const kernels::row_sampling_options draw{
        .fanout = c.options.fanouts[hop],
        .mode = c.options.replacement,
        .weights = c.options.weighted ? kernels::weighting::by_value : kernels::weighting::uniform};
    const kernels::row_streams streams{c.options.seed, epoch, hop, minibatch_of_row,
                                       frontier.vertices};
    csr_matrix drawn;
    {
      // Fetching and drawing are one stage: a sharded source may draw remotely.
      executor_stage stage(c.exec, c.times, c.device_log, "draw_rows");
      drawn = c.rows.draw_rows(c.exec, frontier.vertices, streams, draw);
    }
    return relabelled_hop(frontier, drawn.view());
  }
};

}  // namespace

sampler_entry node_wise_entry() {
  return {.name = "sage",
          .aliases = {"node-wise"},
          .summary = "node-wise (GraphSAGE): fanouts[l] in-neighbours per frontier vertex",
          .fanout = fanout_unit::per_destination,
          .layer = "sage",
          .takes_replacement = true,
          .takes_weights = true,
          .cost_family = "node-wise",
          .make = make_sampling<node_wise_sampling>};
}

}  // namespace bulkgnn::sampler
