#include "pinsage_sampling.hpp"

#include "../src/hop_helpers.hpp"
#include "bulkgnn/core/error.hpp"
#include "bulkgnn/core/rng.hpp"
#include "bulkgnn/kernels/exclude_edges.hpp"
#include "bulkgnn/kernels/gather_rows.hpp"
#include "random_walk_sampling.hpp"

#include <algorithm>
#include <numeric>
#include <utility>
#include <vector>

namespace bulkgnn::sampler {

namespace {

// What walk_stream_layer can encode: steps below 32 (their terminations take
// the step field's upper half), walks below 2^16, hops below 2^9.
constexpr std::int64_t pinsage_max_traversals = 32;
constexpr std::int64_t pinsage_max_walks = 1 << 16;
constexpr std::int64_t pinsage_max_hops = 1 << 9;
constexpr std::uint32_t pinsage_termination_step = 32;

class pinsage_sampling final : public per_destination_sampling {
 public:
  explicit pinsage_sampling(sampling_context& context)
      : per_destination_sampling(context),
        walks_(parameter(context.options, "walks")),
        traversals_(parameter(context.options, "traversals")),
        termination_percent_(
            static_cast<std::uint32_t>(parameter(context.options, "termination_percent"))) {}

  // No walk steps along an edge its minibatch leaves out, and relabelled_hop
  // drops any visited vertex that is one.
 private:
  // The live walkers of one walk number: the frontier row each started
  // from and the vertex it is at, in frontier order.
  struct walkers {
    std::vector<std::int64_t> row;
    std::vector<vertex_t> at;
  };

  sampled_layer sample_hop(const segmented_vertices& frontier,
                           std::span<const std::int64_t> minibatch_ids, std::uint32_t epoch,
                           std::uint32_t hop) override {
    auto& c = context();
    const auto minibatch_of_row = minibatch_of_rows(frontier, minibatch_ids);
    std::vector<std::pair<std::int64_t, vertex_t>> visits;
    {
      executor_stage stage(c.exec, c.times, c.device_log, "walk");
      for (std::int64_t w = 0; w < walks_; ++w) {
        walkers live;
        live.row.resize(frontier.vertices.size());
        std::iota(live.row.begin(), live.row.end(), std::int64_t{0});
        live.at.assign(frontier.vertices.begin(), frontier.vertices.end());
        // Rows held by other ranks are fetched collectively: there every rank
        // takes every step, with walkers left or not.
        const bool alone = c.rows.whole_graph() != nullptr;
        for (std::int64_t s = 0; s < traversals_ && (!alone || !live.row.empty()); ++s) {
          const key_of_walk key{epoch, hop, static_cast<std::uint32_t>(s),
                                static_cast<std::uint32_t>(w)};
          if (s > 0) live = survivors(std::move(live), frontier, minibatch_of_row, key);
          live = stepped(std::move(live), frontier, minibatch_of_row, key);
          for (std::size_t i = 0; i < live.row.size(); ++i)
            visits.emplace_back(live.row[i], live.at[i]);
        }
      }
    }
    const csr_matrix visited = most_visited(visits, frontier, c.options.fanouts[hop]);
    return relabelled_hop(frontier, visited.view());
  }

  struct key_of_walk {
    std::uint32_t epoch, hop, step, walk;
  };

  // The walkers that do not end after their last step (each takes its
  // first step: DGL's termination after each traversal).
  walkers survivors(walkers live, const segmented_vertices& frontier,
                    std::span<const std::uint32_t> minibatch_of_row, const key_of_walk& key) const {
    const auto& o = context().options;
    walkers kept;
    for (std::size_t i = 0; i < live.row.size(); ++i) {
      const auto row = live.row[i];
      philox_stream rng(
          rng_key{o.seed, key.epoch, minibatch_of_row[row],
                  walk_stream_layer(key.hop, pinsage_termination_step + key.step, key.walk),
                  static_cast<std::uint32_t>(frontier.vertices[row])});
      if (rng.uniform_below(100) < termination_percent_) continue;
      kept.row.push_back(row);
      kept.at.push_back(live.at[i]);
    }
    return kept;
  }

  // Each walker one step along a uniform in-edge of the vertex it is at (less
  // its minibatch's excluded edges); one with none to take ends.
  walkers stepped(walkers live, const segmented_vertices& frontier,
                  std::span<const std::uint32_t> minibatch_of_row, const key_of_walk& key) {
    auto& c = context();
    // rows() takes repeats: a whole graph is its own rows, a sharded one
    // fetches each distinct vertex once.
    const gathered_rows rows = c.rows.rows(live.at);
    std::vector<std::uint32_t> minibatch_of_walker(live.row.size());
    std::vector<vertex_t> start_of_walker(live.row.size());
    for (std::size_t i = 0; i < live.row.size(); ++i) {
      minibatch_of_walker[i] = minibatch_of_row[live.row[i]];
      start_of_walker[i] = frontier.vertices[live.row[i]];
    }
    const kernels::row_streams streams{c.options.seed, key.epoch,
                                       walk_stream_layer(key.hop, key.step, key.walk),
                                       minibatch_of_walker, start_of_walker};
    const kernels::row_sampling_options one_step{.fanout = 1, .mode = kernels::replacement::with};
    csr_matrix step;
    if (c.excluded == nullptr) {
      step = kernels::sample_rows(c.exec, detail::pattern_of(rows.rows), rows.row_of, streams,
                                  one_step);
    } else {
      const csr_matrix kept = rows_without_excluded(live, frontier, rows.rows, rows.row_of);
      buffer<vertex_t> own_row(live.at.size());
      std::iota(own_row.begin(), own_row.end(), vertex_t{0});
      step = kernels::sample_rows(c.exec, kept.view(), own_row, streams, one_step);
    }
    walkers next;
    for (std::size_t i = 0; i < live.row.size(); ++i) {
      if (step.indptr[i + 1] == step.indptr[i]) continue;
      next.row.push_back(live.row[i]);
      next.at.push_back(step.indices[static_cast<std::size_t>(step.indptr[i])]);
    }
    return next;
  }

  // Walker i's row (that of the vertex it is at) less the edges its
  // minibatch leaves out; the walkers stay in frontier order, so they are
  // segmented by minibatch as the frontier is.
  csr_matrix rows_without_excluded(const walkers& live, const segmented_vertices& frontier,
                                   csr_view rows, std::span<const vertex_t> row_of_walker) const {
    const auto& exec = context().exec;
    const auto own = kernels::gather_rows(exec, detail::pattern_of(rows), row_of_walker);
    segmented_vertices by_minibatch;
    by_minibatch.vertices = buffer<vertex_t>(live.at.begin(), live.at.end());
    by_minibatch.offsets.assign(static_cast<std::size_t>(frontier.segments()) + 1, 0);
    std::size_t i = 0;
    for (std::int64_t j = 0; j < frontier.segments(); ++j) {
      while (i < live.row.size() && live.row[i] < frontier.offsets[j + 1]) ++i;
      by_minibatch.offsets[j + 1] = static_cast<std::int64_t>(i);
    }
    return kernels::drop_excluded_edges(exec, own.view(), by_minibatch, *context().excluded);
  }

  // Row i: the fanout most visited vertices of frontier row i's walks (the
  // start itself left out), ascending id, their visit counts as values.
  csr_matrix most_visited(const std::vector<std::pair<std::int64_t, vertex_t>>& visits,
                          const segmented_vertices& frontier, std::int64_t fanout) const {
    const auto rows = static_cast<std::int64_t>(frontier.vertices.size());
    // The visits bucketed by frontier row (a counting sort), so that only
    // each row's few visits are sorted.
    std::vector<std::int64_t> first(static_cast<std::size_t>(rows) + 1, 0);
    for (const auto& visit : visits) ++first[static_cast<std::size_t>(visit.first) + 1];
    std::partial_sum(first.begin(), first.end(), first.begin());
    std::vector<vertex_t> by_row(visits.size());
    std::vector<std::int64_t> next(first.begin(), first.end() - 1);
    for (const auto& [row, v] : visits) by_row[static_cast<std::size_t>(next[row]++)] = v;
    csr_matrix out;
    out.rows = rows;
    out.cols = context().rows.num_vertices();
    std::vector<std::pair<float, vertex_t>> counted;
    for (std::int64_t r = 0; r < rows; ++r) {
      const auto begin = by_row.begin() + first[r];
      const auto end = by_row.begin() + first[r + 1];
      std::sort(begin, end);
      counted.clear();
      for (auto run = begin; run != end;) {
        const auto after = std::upper_bound(run, end, *run);
        if (*run != frontier.vertices[r])
          counted.emplace_back(static_cast<float>(after - run), *run);
        run = after;
      }
      keep_most_visited(counted, fanout);
      for (const auto& [count, v] : counted) {
        out.indices.push_back(v);
        out.values.push_back(count);
      }
      out.indptr.push_back(static_cast<edge_t>(out.indices.size()));
    }
    return out;
  }

  // The `fanout` largest counts (the smaller id first among equals; -1:
  // all), in ascending id.
  static void keep_most_visited(std::vector<std::pair<float, vertex_t>>& counted,
                                std::int64_t fanout) {
    if (fanout >= 0 && std::ssize(counted) > fanout) {
      std::nth_element(counted.begin(), counted.begin() + fanout, counted.end(),
                       [](const auto& a, const auto& b) {
                         return a.first != b.first ? a.first > b.first : a.second < b.second;
                       });
      counted.resize(static_cast<std::size_t>(fanout));
    }
    std::sort(counted.begin(), counted.end(),
              [](const auto& a, const auto& b) { return a.second < b.second; });
  }

  std::int64_t walks_;
  std::int64_t traversals_;
  std::uint32_t termination_percent_;
};

void check_pinsage_options(const sampler_options& options) {
  BULKGNN_EXPECTS(static_cast<std::int64_t>(options.fanouts.size()) <= pinsage_max_hops,
                  "sampler_options.fanouts: the pinsage sampler takes at most {} hops",
                  pinsage_max_hops);
}

}  // namespace

sampler_entry pinsage_entry() {
  return {.name = "pinsage",
          .aliases = {"random-walk-top-k"},
          .summary =
              "PinSAGE (DGL's RandomWalkNeighborSampler): the fanouts[l] vertices most "
              "visited by --walks walks of up to --traversals steps from each frontier "
              "vertex, visit counts as weights",
          .fanout = fanout_unit::per_destination,
          .layer = "sage",
          // The walks and the top-k are host code.
          .host_only = true,
          .parameters = {{.name = "walks",
                          .help = "walks from each frontier vertex (pinsage sampler)",
                          .default_value = 10,
                          .min = 1,
                          .max = pinsage_max_walks - 1},
                         {.name = "traversals",
                          .help = "steps of a walk at most (pinsage sampler)",
                          .default_value = 3,
                          .min = 1,
                          .max = pinsage_max_traversals - 1},
                         {.name = "termination_percent",
                          .help = "chance in percent that a walk ends after each step "
                                  "(pinsage sampler)",
                          .default_value = 50,
                          .min = 0,
                          .max = 99}},
          .check = check_pinsage_options,
          .make = make_sampling<pinsage_sampling>};
}

}  // namespace bulkgnn::sampler
