// A sampler program's hop, run step by step over the whole bulk: each step
// is one call of the kernels the built-in samplers call, in their order, so
// a program written as a built-in sampler draws its minibatches bit for bit.
#include "program_sampling.hpp"

#include "../layer_wise/layer_wise_steps.hpp"
#include "../src/hop_helpers.hpp"
#include "../src/minibatch_parts.hpp"
#include "bulkgnn/core/error.hpp"
#include "bulkgnn/kernels/frontier.hpp"
#include "bulkgnn/kernels/relabel.hpp"
#include "bulkgnn/kernels/spgemm.hpp"

#include <algorithm>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace bulkgnn::sampler::detail {

namespace {

// A value of a running hop: a matrix (per destination or per minibatch, a
// draw or a block), or a vertex list.
struct program_value {
  csr_matrix matrix = {};
  bool pattern = false;        // frontier_selection's ones: the matrix counts as ones
  bool frontier_rows = false;  // frontier_rows: read from the graph, never made
  segmented_vertices vertices = {};
};

class program_sampling final : public sampling_algorithm {
 public:
  program_sampling(sampling_context& context, const sampler_program& program)
      : sampling_algorithm(context), program_(program) {
    for (const auto& step : program_.hop) {
      const bool by_edge_weight = step.operation == program_operation::sample_rows &&
                                  step.weights == kernels::weighting::by_value &&
                                  program_.reads_frontier_rows(step);
      BULKGNN_EXPECTS(!by_edge_weight || context.rows.weighted(),
                      "sampler program '{}': sample_rows of the frontier's rows with weights "
                      "'value' draws by edge weight, and this graph has none",
                      program_.name);
      BULKGNN_EXPECTS(!step.shared_variates || std::ranges::min(context.options.fanouts) >= 1,
                      "sampler_options.fanouts: sampler program '{}' draws with shared variates "
                      "(LABOR-0), whose fanouts are expected counts of neighbours, at least 1",
                      program_.name);
    }
  }

  bulk_sample sample(std::uint32_t epoch, segmented_vertices seeds,
                     std::span<const std::int64_t> minibatch_ids) override {
    return grow_hop_by_hop(context().exec, std::move(seeds), minibatch_ids,
                           context().options.fanouts.size(),
                           [&](const segmented_vertices& frontier, std::uint32_t hop) {
                             return run_hop(frontier, minibatch_ids, epoch, hop);
                           });
  }

  // A per-destination program's slice samples alone; any other is cut from
  // the whole minibatch, which every rank samples.
  bulk_sample sample_part(std::uint32_t epoch, segmented_vertices whole, segmented_vertices part,
                          std::span<const std::int64_t> minibatch_ids,
                          comm::communicator*) override {
    if (program_.per_destination_only()) return sample(epoch, std::move(part), minibatch_ids);
    return parts_of(sample(epoch, whole, minibatch_ids), whole, part, context().options.kind);
  }

  [[nodiscard]] bool leaves_out_edges() const override { return program_.per_destination_only(); }
  [[nodiscard]] bool destinations_draw_alone() const override {
    return program_.per_destination_only();
  }

 private:
  // What one hop has made so far.
  struct hop_state {
    const segmented_vertices& frontier;
    std::span<const std::int64_t> minibatch_ids;
    std::uint32_t epoch;
    std::uint32_t hop;
    std::map<std::string, program_value, std::less<>> values = {};
    // The frontier's rows, fetched by the first step that reads them: once
    // per hop, as a sharded graph's collective fetch requires.
    std::optional<buffer<vertex_t>> distinct = {};
    gathered_rows rows = {};
    std::optional<per_minibatch_rows> minibatch_rows = {};
  };

  sampled_layer run_hop(const segmented_vertices& frontier,
                        std::span<const std::int64_t> minibatch_ids, std::uint32_t epoch,
                        std::uint32_t hop) {
    hop_state state{frontier, minibatch_ids, epoch, hop};
    for (const auto& step : program_.hop) run_step(step, state);
    segmented_vertices sources = program_.sources == "frontier"
                                     ? frontier
                                     : std::move(state.values.at(program_.sources).vertices);
    return {std::move(sources), std::move(state.values.at(program_.block).matrix),
            frontier.offsets};
  }

  void run_step(const program_step& step, hop_state& state) {
    auto& c = context();
    switch (step.operation) {
      case program_operation::frontier_rows:
        state.values[step.output] = {.frontier_rows = true};
        return;
      case program_operation::frontier_selection: {
        fetch_rows(state);
        executor_stage stage(c.exec, c.times, c.device_log, "spgemm");
        state.values[step.output] = {.matrix = kernels::frontier_selection(
                                         c.exec, state.frontier, *state.distinct, state.rows.rows,
                                         state.rows.row_of, c.rows.num_vertices()),
                                     .pattern = step.scale == selection_scale::one};
        return;
      }
      case program_operation::multiply: {
        fetch_rows(state);
        executor_stage stage(c.exec, c.times, c.device_log, "spgemm");
        const auto& q = state.values.at(step.input);
        state.values[step.output] = {.matrix =
                                         selection_times_rows(c.exec, view_of(q), *state.distinct,
                                                              state.rows, step.self_loops)};
        return;
      }
      case program_operation::sample_rows:
        state.values[step.output] = {.matrix = draw(step, state)};
        return;
      case program_operation::relabel: {
        auto relabelled = relabel_leaving_out_excluded(c, state.frontier,
                                                       state.values.at(step.input).matrix.view());
        state.values[step.output] = {.vertices = std::move(relabelled.sources)};
        state.values[step.block] = {.matrix = std::move(relabelled.blocks)};
        return;
      }
      case program_operation::sources: {
        executor_stage stage(c.exec, c.times, c.device_log, "extract");
        state.values[step.output] = {
            .vertices =
                frontier_then_drawn(c.exec, state.frontier, view_of(state.values.at(step.input)))};
        return;
      }
      case program_operation::induce:
        state.values[step.output] = {.matrix = induce(step, state)};
        return;
      case program_operation::normalize_rows: {
        executor_stage stage(c.exec, c.times, c.device_log, "extract");
        csr_matrix block = std::move(state.values.at(step.input).matrix);
        BULKGNN_EXPECTS(block.values.size() == block.indices.size(),
                        "sampler program '{}': normalize_rows of '{}', a block without values "
                        "(relabel of an unweighted graph's draw); induce a block to weigh it",
                        program_.name, step.input);
        kernels::normalize_rows(c.exec, block);
        state.values[step.output] = {.matrix = std::move(block)};
        return;
      }
    }
  }

  static csr_view view_of(const program_value& value) {
    return value.pattern ? pattern_of(value.matrix.view()) : value.matrix.view();
  }

  void fetch_rows(hop_state& state) {
    if (state.distinct) return;
    auto& c = context();
    state.distinct = kernels::sorted_distinct(c.exec, state.frontier.vertices);
    executor_stage stage(c.exec, c.times, c.device_log, "fetch_rows");
    state.rows = c.rows.rows(*state.distinct);
  }

  const per_minibatch_rows& minibatch_rows(hop_state& state) {
    if (!state.minibatch_rows)
      state.minibatch_rows = rows_per_minibatch(context().exec, state.minibatch_ids, false);
    return *state.minibatch_rows;
  }

  // fanouts[hop] entries per row: a node-wise draw from the frontier's rows,
  // keyed by (minibatch, vertex), or one per minibatch row, keyed by the
  // minibatch alone.
  csr_matrix draw(const program_step& step, hop_state& state) {
    auto& c = context();
    const kernels::row_sampling_options options{
        .fanout = c.options.fanouts[state.hop], .mode = step.replacement, .weights = step.weights};
    const auto& matrix = state.values.at(step.input);
    if (matrix.frontier_rows) {
      const auto minibatch_of_row = minibatch_of_rows(c.exec, state.frontier, state.minibatch_ids);
      if (step.shared_variates) {
        executor_stage stage(c.exec, c.times, c.device_log, "draw_rows");
        const gathered_rows rows = c.rows.rows(state.frontier.vertices);
        return kernels::sample_rows_with_shared_variates(
            c.exec, rows.rows, rows.row_of,
            {c.options.seed, state.epoch, state.hop, minibatch_of_row}, options.fanout);
      }
      const kernels::row_streams streams{c.options.seed, state.epoch, state.hop, minibatch_of_row,
                                         state.frontier.vertices};
      executor_stage stage(c.exec, c.times, c.device_log, "draw_rows");
      return c.rows.draw_rows(c.exec, state.frontier.vertices, streams, options);
    }
    const auto& rows = minibatch_rows(state);
    executor_stage stage(c.exec, c.times, c.device_log, "sample_rows");
    return kernels::sample_rows(c.exec, view_of(matrix), rows.rows,
                                rows.streams(c.options.seed, state.epoch, state.hop), options);
  }

  csr_matrix induce(const program_step& step, hop_state& state) {
    auto& c = context();
    fetch_rows(state);
    const auto& sources =
        step.input == "frontier" ? state.frontier : state.values.at(step.input).vertices;
    executor_stage stage(c.exec, c.times, c.device_log, "extract");
    buffer<float> scale;
    if (step.inverse_probabilities.empty()) {
      const std::vector<float> ones(sources.vertices.size(), 1.0f);
      scale = copy_to(std::span<const float>(ones), c.exec.memory());
    } else {
      scale = kernels::lookup_entries(c.exec, view_of(state.values.at(step.inverse_probabilities)),
                                      minibatch_rows(state).rows, sources);
      kernels::invert_probabilities(c.exec, scale);
    }
    return extract_layer_blocks(c.exec, state.frontier, sources, scale, *state.distinct, state.rows,
                                step.self_loops);
  }

  const sampler_program& program_;
};

}  // namespace

std::unique_ptr<sampling_algorithm> make_program_sampling(sampling_context& context,
                                                          const sampler_program& program) {
  return std::make_unique<program_sampling>(context, program);
}

}  // namespace bulkgnn::sampler::detail
