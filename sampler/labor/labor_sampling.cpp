#include "labor_sampling.hpp"

#include "../src/hop_helpers.hpp"
#include "bulkgnn/core/error.hpp"
#include "bulkgnn/kernels/rules/labor_importance.hpp"
#include "bulkgnn/kernels/sample_rows.hpp"
#include "bulkgnn/kernels/spgemm.hpp"

namespace bulkgnn::sampler {

namespace {

class labor_sampling final : public per_destination_sampling {
 public:
  using per_destination_sampling::per_destination_sampling;

 private:
  sampled_layer sample_hop(const segmented_vertices& frontier,
                           std::span<const std::int64_t> minibatch_ids, std::uint32_t epoch,
                           std::uint32_t hop) override {
    auto& c = context();
    const auto minibatch_of_row = minibatch_of_rows(frontier, minibatch_ids);
    csr_matrix drawn;
    {
      executor_stage stage(c.exec, c.times, c.device_log, "draw_rows");
      const gathered_rows rows = c.rows.rows(frontier.vertices);
      drawn = kernels::sample_rows_with_shared_variates(
          c.exec, rows.rows, rows.row_of,
          kernels::row_streams{c.options.seed, epoch, hop, minibatch_of_row},
          c.options.fanouts[hop]);
    }
    return relabelled_hop(frontier, drawn.view());
  }
};

// LABOR-i: the frontier rows of each minibatch share importances
// (kernels::sample_rows_with_importance), so a slice of its seeds is cut
// from the whole minibatch. The drawn entries carry their Horvitz–Thompson
// weights; after a link minibatch's excluded edges are dropped, each
// destination's weights are divided by their sum (the self-normalised
// estimate of the neighbours' mean, which the graph-conv layer sums).
class labor_importance_sampling final : public per_destination_sampling {
 public:
  using per_destination_sampling::per_destination_sampling;

 private:
  [[nodiscard]] bool destinations_share_draws() const override { return true; }

  sampled_layer sample_hop(const segmented_vertices& frontier,
                           std::span<const std::int64_t> minibatch_ids, std::uint32_t epoch,
                           std::uint32_t hop) override {
    auto& c = context();
    const auto minibatch_of_row = minibatch_of_rows(frontier, minibatch_ids);
    csr_matrix drawn;
    {
      executor_stage stage(c.exec, c.times, c.device_log, "draw_rows");
      const gathered_rows rows = c.rows.rows(frontier.vertices);
      segmented_vertices positions;
      positions.vertices.assign(rows.row_of.begin(), rows.row_of.end());
      positions.offsets = frontier.offsets;
      drawn = kernels::sample_rows_with_importance(
          c.exec, rows.rows, positions,
          kernels::row_streams{c.options.seed, epoch, hop, minibatch_of_row},
          c.options.fanouts[hop], parameter(c.options, "importance_iterations"));
    }
    sampled_layer layer = relabelled_hop(frontier, drawn.view());
    kernels::normalize_rows(c.exec, layer.blocks);
    return layer;
  }
};

void check_labor_options(const sampler_options& options) {
  for (std::size_t h = 0; h < options.fanouts.size(); ++h)
    BULKGNN_EXPECTS(options.fanouts[h] >= 1,
                    "sampler_options.fanouts: hop {} has fanout {}; LABOR samplers take an "
                    "expected count of neighbours per destination, at least 1",
                    h, options.fanouts[h]);
}

}  // namespace

sampler_entry labor_entry() {
  return {.name = "labor",
          .aliases = {"labor-0"},
          .summary =
              "LABOR-0: each neighbour kept with probability min(1, fanouts[l] / degree), "
              "its variate shared by the minibatch's destinations (fewer distinct "
              "vertices than sage)",
          .fanout = fanout_unit::per_destination,
          .layer = "sage",
          .host_only = true,
          .check = check_labor_options,
          .make = make_sampling<labor_sampling>};
}

sampler_entry labor_importance_entry() {
  return {.name = "labor-star",
          .aliases = {"labor-*", "labor-i"},
          .summary =
              "LABOR-* / LABOR-i: LABOR-0 with importance sampling, the neighbours' "
              "probabilities tuned per minibatch to draw fewer distinct vertices; "
              "weighted blocks",
          .fanout = fanout_unit::per_destination,
          .layer = "graph-conv",
          .host_only = true,
          .parameters = {{.name = "importance_iterations",
                          .help = "fixed-point steps of the importance probabilities (LABOR-i); "
                                  "-1: until the expected vertex count stops falling (LABOR-*)",
                          .default_value = -1,
                          .min = -1,
                          .max = kernels::rules::labor_iteration_limit}},
          .check = check_labor_options,
          .make = make_sampling<labor_importance_sampling>};
}

}  // namespace bulkgnn::sampler
