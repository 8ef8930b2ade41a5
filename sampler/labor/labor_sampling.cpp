#include "labor_sampling.hpp"

#include "../src/hop_helpers.hpp"
#include "bulkgnn/core/error.hpp"
#include "bulkgnn/kernels/rules/labor_importance.hpp"
#include "bulkgnn/kernels/sample_rows.hpp"
#include "bulkgnn/kernels/spgemm.hpp"

namespace bulkgnn::sampler {

namespace {

// A LABOR hop: the frontier's rows drawn with variates the minibatch's
// destinations share (stage "draw_rows"), then relabelled per minibatch.
class shared_variates_sampling : public per_destination_sampling {
 public:
  using per_destination_sampling::per_destination_sampling;

 protected:
  // Draws every frontier row: `rows` holds them (row_of[i] is frontier row
  // i's), `streams` keys their variates.
  [[nodiscard]] virtual csr_matrix draw(const gathered_rows& rows,
                                        const segmented_vertices& frontier,
                                        const kernels::row_streams& streams,
                                        std::int64_t fanout) = 0;

 private:
  sampled_layer sample_hop(const segmented_vertices& frontier,
                           std::span<const std::int64_t> minibatch_ids, std::uint32_t epoch,
                           std::uint32_t hop) final {
    auto& c = context();
    const auto minibatch_of_row = minibatch_of_rows(frontier, minibatch_ids);
    csr_matrix drawn;
    {
      executor_stage stage(c.exec, c.times, c.device_log, "draw_rows");
      const gathered_rows rows = c.rows.rows(frontier.vertices);
      drawn = draw(rows, frontier, {c.options.seed, epoch, hop, minibatch_of_row},
                   c.options.fanouts[hop]);
    }
    sampled_layer layer = relabelled_hop(frontier, drawn.view());
    // Weighted draws (LABOR-i's): each destination's kept weights, after a
    // link minibatch's excluded edges are dropped, divided by their sum.
    if (!layer.blocks.values.empty()) kernels::normalize_rows(c.exec, layer.blocks);
    return layer;
  }
};

class labor_sampling final : public shared_variates_sampling {
 public:
  using shared_variates_sampling::shared_variates_sampling;

 private:
  csr_matrix draw(const gathered_rows& rows, const segmented_vertices&,
                  const kernels::row_streams& streams, std::int64_t fanout) override {
    return kernels::sample_rows_with_shared_variates(context().exec, rows.rows, rows.row_of,
                                                     streams, fanout);
  }
};

// LABOR-i: the frontier rows of each minibatch share importances
// (kernels::sample_rows_with_importance), so a slice of its seeds is cut
// from the whole minibatch. The drawn entries carry their Horvitz–Thompson
// weights, which the hop normalises per destination (the self-normalised
// estimate of the neighbours' mean, which the graph-conv layer sums).
class labor_importance_sampling final : public shared_variates_sampling {
 public:
  using shared_variates_sampling::shared_variates_sampling;

 private:
  [[nodiscard]] bool destinations_share_draws() const override { return true; }

  csr_matrix draw(const gathered_rows& rows, const segmented_vertices& frontier,
                  const kernels::row_streams& streams, std::int64_t fanout) override {
    segmented_vertices positions;
    positions.vertices = copy_to(rows.row_of, context().exec.memory());
    positions.offsets = frontier.offsets;
    return kernels::sample_rows_with_importance(
        context().exec, rows.rows, positions, streams, fanout,
        parameter(context().options, "importance_iterations"));
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
