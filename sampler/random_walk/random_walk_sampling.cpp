#include "random_walk_sampling.hpp"

#include "../src/hop_helpers.hpp"
#include "bulkgnn/core/error.hpp"
#include "bulkgnn/kernels/elementwise.hpp"
#include "bulkgnn/kernels/exclude_edges.hpp"
#include "bulkgnn/kernels/frontier.hpp"
#include "bulkgnn/kernels/gather_rows.hpp"
#include "bulkgnn/kernels/spgemm.hpp"

#include <numeric>
#include <optional>
#include <vector>

namespace bulkgnn::sampler {

namespace {

// What walk_stream_layer can encode.
constexpr std::int64_t max_hops = 1 << 9;
constexpr std::int64_t max_walk_length = (1 << 6) - 1;
constexpr std::int64_t max_walks = 1 << 16;

class random_walk_sampling final : public per_destination_sampling {
 public:
  explicit random_walk_sampling(sampling_context& context)
      : per_destination_sampling(context),
        walk_length_(parameter(context.options, "walk_length")) {}

  // Leaves excluded edges out twice: no walk steps along one (a walk t -> s ->
  // x would reach x through s -> t, which dropping the visit to s would not
  // undo), and relabelled_hop drops any end that is one.
 private:
  sampled_layer sample_hop(const segmented_vertices& frontier,
                           std::span<const std::int64_t> minibatch_ids, std::uint32_t epoch,
                           std::uint32_t hop) override {
    auto& c = context();
    // Leaving edges out builds each walker's rows on the host.
    BULKGNN_EXPECTS(c.excluded == nullptr || host_accessible(c.exec.memory().space()),
                    "sampler_options.kind random-walk: a link minibatch's walks leave its edges "
                    "out on the host back ends only, not on a {} executor",
                    backend_name(c.exec.kind()));
    const auto minibatch_of_row = minibatch_of_rows(frontier, minibatch_ids);
    const auto walks = static_cast<std::uint32_t>(c.options.fanouts[hop]);
    csr_matrix visits;
    {
      executor_stage stage(c.exec, c.times, c.device_log, "walk");
      // Every walk's first step reads the frontier's rows: fetched once.
      const step_rows first_step = rows_at(frontier.vertices);
      const auto excluded = c.excluded != nullptr ? std::optional(without_loops(*c.excluded))
                                                  : std::optional<kernels::excluded_edges>();
      for (std::uint32_t w = 0; w < walks; ++w) {
        csr_matrix ends = walk(frontier, first_step, minibatch_of_row, epoch, hop, w,
                               excluded ? &*excluded : nullptr);
        visits = w == 0 ? with_counts_of_one(std::move(ends))
                        : kernels::add(c.exec, visits.view(), ends.view());
      }
    }
    return relabelled_hop(frontier, visits.view());
  }

  // What walkers at `at` step from: the rows of their distinct vertices,
  // each with its self loop, and each walker's row among them.
  struct step_rows {
    csr_matrix looped;
    buffer<vertex_t> row_of_walker;
  };

  step_rows rows_at(std::span<const vertex_t> at) {
    auto& c = context();
    const auto distinct = kernels::sorted_distinct(c.exec, at);
    const gathered_rows rows = c.rows.rows(distinct);
    return {kernels::with_self_loops(c.exec, rows.rows, rows.row_of, distinct),
            kernels::positions_in_sorted(c.exec, at, distinct)};
  }

  // Walk w from every frontier vertex (whose rows are `first_step`): row i
  // holds its end vertex alone. With `excluded`, no walker steps along an
  // edge its minibatch leaves out.
  csr_matrix walk(const segmented_vertices& frontier, const step_rows& first_step,
                  std::span<const std::uint32_t> minibatch_of_row, std::uint32_t epoch,
                  std::uint32_t hop, std::uint32_t w, const kernels::excluded_edges* excluded) {
    auto& c = context();
    const std::span<const vertex_t> starts(frontier.vertices);
    csr_matrix step;
    step_rows later_step;
    for (std::int64_t s = 0; s < walk_length_; ++s) {
      if (s > 0)
        later_step = rows_at(std::span<const vertex_t>(step.indices.data(), step.indices.size()));
      const step_rows& from = s == 0 ? first_step : later_step;
      const kernels::row_streams streams{c.options.seed, epoch,
                                         walk_stream_layer(hop, static_cast<std::uint32_t>(s), w),
                                         minibatch_of_row, starts};
      // Every looped row holds its self loop, so each walker draws exactly one entry.
      const kernels::row_sampling_options one_step{.fanout = 1, .mode = kernels::replacement::with};
      if (excluded == nullptr) {
        step = kernels::sample_rows(c.exec, detail::pattern_of(from.looped.view()),
                                    from.row_of_walker, streams, one_step);
      } else {
        const auto at =
            s == 0 ? starts : std::span<const vertex_t>(step.indices.data(), step.indices.size());
        const auto rows = rows_without_excluded(frontier, at, from, *excluded);
        step = kernels::sample_rows(c.exec, rows.view(), walker_ids(at.size()), streams, one_step);
      }
    }
    return step;
  }

  // Each walker's row (that of the vertex it is `at`, with its self loop),
  // less the edges its minibatch leaves out. Drawn with the walker's stream
  // as before, a row that lost nothing gives the same step.
  csr_matrix rows_without_excluded(const segmented_vertices& frontier, std::span<const vertex_t> at,
                                   const step_rows& from,
                                   const kernels::excluded_edges& excluded) const {
    const auto& exec = context().exec;
    const auto rows =
        kernels::gather_rows(exec, detail::pattern_of(from.looped.view()), from.row_of_walker);
    segmented_vertices walkers;
    walkers.vertices = buffer<vertex_t>(at.begin(), at.end());
    walkers.offsets = frontier.offsets;
    return kernels::drop_excluded_edges(exec, rows.view(), walkers, excluded);
  }

  // 0, 1, ..., count - 1: walker i draws from row i.
  static buffer<vertex_t> walker_ids(std::size_t count) {
    buffer<vertex_t> ids(count);
    std::iota(ids.begin(), ids.end(), vertex_t{0});
    return ids;
  }

  // A walker keeps its self loop, so that it always has a step to take: a
  // positive that is a loop leaves the blocks (relabelled_hop) but not the walks.
  static kernels::excluded_edges without_loops(const kernels::excluded_edges& excluded) {
    kernels::excluded_edges kept;
    for (std::int64_t j = 0; j < excluded.segments(); ++j) {
      std::vector<std::uint64_t> keys;
      for (auto k = excluded.offsets[j]; k < excluded.offsets[j + 1]; ++k) {
        const auto key = excluded.keys[static_cast<std::size_t>(k)];
        if ((key >> 32) != (key & 0xFFFFFFFFu)) keys.push_back(key);
      }
      kept.push_segment(std::move(keys));
    }
    return kept;
  }

  // `ends` with a visit count of one per entry.
  csr_matrix with_counts_of_one(csr_matrix ends) const {
    const auto& exec = context().exec;
    ends.values = buffer<float>(ends.indices.size(), exec.memory());
    kernels::fill(exec, std::span<float>(ends.values.data(), ends.values.size()), 1.0f);
    return ends;
  }

  std::int64_t walk_length_;
};

void check_random_walk_options(const sampler_options& options) {
  BULKGNN_EXPECTS(static_cast<std::int64_t>(options.fanouts.size()) <= max_hops,
                  "sampler_options.fanouts: the random-walk sampler takes at most {} hops",
                  max_hops);
  for (std::size_t h = 0; h < options.fanouts.size(); ++h)
    BULKGNN_EXPECTS(options.fanouts[h] >= 1 && options.fanouts[h] <= max_walks,
                    "sampler_options.fanouts: hop {} has fanout {}; the random-walk sampler "
                    "takes a count of walks in [1, {}]",
                    h, options.fanouts[h], max_walks);
}

}  // namespace

sampler_entry random_walk_entry() {
  return {.name = "random-walk",
          .summary =
              "random-walk neighbours: the distinct ends of fanouts[l] uniform walks of "
              "--walk-length steps from each frontier vertex, visit counts as weights",
          .fanout = fanout_unit::per_destination,
          .layer = "sage",
          .parameters = {{.name = "walk_length",
                          .help = "steps of each walk",
                          .default_value = 2,
                          .min = 1,
                          .max = max_walk_length}},
          .check = check_random_walk_options,
          .make = make_sampling<random_walk_sampling>};
}

}  // namespace bulkgnn::sampler
