// Node-wise sampling draws what its definition says, with stated power.
//
// Every test here is designed (statistics.hpp): false-alarm rate alpha = 1e-4
// over seeds, and a sample large enough that the bias named in its comment is
// detected with probability at least 0.99, which the test asserts before it
// looks at the sample. Seeds are fixed, so each test is deterministic.
#include "bulkgnn/sampler/bulk_sampler.hpp"

#include "statistics.hpp"
#include "test_graphs.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <iterator>
#include <map>
#include <numeric>
#include <set>
#include <unordered_map>

namespace bulkgnn::sampler {
namespace {

using testing::coincidence_test;
using testing::count_test_family;
using testing::regular_graph;

// One destination's draw at one hop: which positions of its row were drawn,
// as a bit mask (rows of at most 32 entries).
struct row_draw {
  std::int64_t minibatch = 0;
  std::uint32_t hop = 0;
  vertex_t destination = 0;
  std::uint32_t positions = 0;
};

// Every destination's draw in a node-wise bulk, read off its blocks.
std::vector<row_draw> row_draws(csr_view g, const bulk_sample& bulk) {
  std::vector<row_draw> draws;
  for (std::uint32_t hop = 0; hop < bulk.layers.size(); ++hop) {
    const auto& layer = bulk.layers[hop];
    for (std::int64_t j = 0; j < bulk.count(); ++j) {
      const auto sources = layer.sources.segment(j);
      for (auto r = layer.row_offsets[j]; r < layer.row_offsets[j + 1]; ++r) {
        const vertex_t dst = sources[r - layer.row_offsets[j]];
        const auto row = g.row(dst);
        std::uint32_t mask = 0;
        for (auto e = layer.blocks.indptr[r]; e < layer.blocks.indptr[r + 1]; ++e) {
          const vertex_t src = sources[layer.blocks.indices[e]];
          const auto at = std::lower_bound(row.begin(), row.end(), src);
          EXPECT_TRUE(at != row.end() && *at == src) << "drew " << src << " outside row " << dst;
          mask |= 1u << (at - row.begin());
        }
        draws.push_back({bulk.minibatch_ids[j], hop, dst, mask});
      }
    }
  }
  return draws;
}

// The node-wise workload of these tests: 4,000 vertices of degree 20, two
// hops of fanout 5, the epoch's 8 minibatches of 500 seeds sampled as one
// bulk.
constexpr vertex_t nodes = 4000;
constexpr int degree = 20, fanout = 5, batch = 500;

struct node_wise_run {
  csr_matrix graph = regular_graph(nodes, degree, 31);
  std::vector<vertex_t> seeds = testing::all_vertices(nodes);

  std::vector<row_draw> epoch(std::uint32_t seed, std::uint32_t epoch_number) const {
    bulk_sampler sampler(graph.view(), sampler_options{.fanouts = {fanout, fanout}, .seed = seed});
    const epoch_plan plan(seeds, batch, seed, epoch_number);
    return row_draws(graph.view(), sampler.sample(plan, 0, plan.num_minibatches()));
  }
};

// C(n, k) as a double.
double choose(int n, int k) {
  double c = 1;
  for (int i = 1; i <= k; ++i) c = c * (n - k + i) / i;
  return c;
}

// Pairs of equal draws among `draws` grouped by `key`: the coincidences that
// independent draws give by chance 1 / C(degree, fanout) per pair.
template <class Key>
std::pair<double, std::int64_t> pairs_and_coincidences(const std::vector<row_draw>& draws,
                                                       Key key) {
  std::map<decltype(key(draws[0])), std::unordered_map<std::uint32_t, std::int64_t>> groups;
  for (const auto& d : draws) ++groups[key(d)][d.positions];
  double pairs = 0;
  std::int64_t coincidences = 0;
  for (const auto& [k, masks] : groups) {
    std::int64_t members = 0;
    for (const auto& [mask, count] : masks) {
      members += count;
      coincidences += count * (count - 1) / 2;
    }
    pairs += static_cast<double>(members) * static_cast<double>(members - 1) / 2;
  }
  return {pairs, coincidences};
}

// Draws without replacement are uniform over subsets: every pair of positions
// is drawn together with probability s(s-1) / (d(d-1)) (190 cells, all rows of
// both hops pooled). Detects a 5% bias of any one pair's joint inclusion with
// power >= 0.99; a sampler whose draws favour some subsets over others moves
// some pair's frequency.
TEST(NodeWiseStatistics, EveryPairOfPositionsIsDrawnTogetherEquallyOften) {
  const node_wise_run run;
  constexpr int epochs = 20;
  const double p = static_cast<double>(fanout * (fanout - 1)) / (degree * (degree - 1));
  std::vector<double> together(degree * (degree - 1) / 2, 0);
  double rows = 0;
  for (int e = 0; e < epochs; ++e) {
    for (const auto& d : run.epoch(6, static_cast<std::uint32_t>(e))) {
      rows += 1;
      std::size_t cell = 0;
      for (int a = 0; a < degree; ++a)
        for (int b = a + 1; b < degree; ++b, ++cell)
          if ((d.positions >> a & 1u) && (d.positions >> b & 1u)) together[cell] += 1;
    }
  }
  const count_test_family family{.cells = together.size()};
  ASSERT_GE(family.power(rows, p, 0.05), testing::required_power) << rows << " rows";
  ASSERT_GE(family.power(rows, p, -0.05), testing::required_power) << rows << " rows";
  const auto verdict = family.test(together, std::vector<double>(together.size(), p), rows);
  EXPECT_FALSE(verdict.rejected) << "pair " << verdict.worst << ": z = " << verdict.worst_z;
}

// Draws per (hop, position) of a node-wise bulk on `g`, every drawn entry
// counted (with replacement a position may be drawn more than once by a row),
// and rows per hop.
void count_positions(csr_view g, const bulk_sample& bulk, std::vector<double>& counts,
                     std::vector<double>& rows) {
  for (std::uint32_t hop = 0; hop < bulk.layers.size(); ++hop) {
    const auto& layer = bulk.layers[hop];
    for (std::int64_t j = 0; j < bulk.count(); ++j) {
      const auto sources = layer.sources.segment(j);
      for (auto r = layer.row_offsets[j]; r < layer.row_offsets[j + 1]; ++r) {
        const auto row = g.row(sources[r - layer.row_offsets[j]]);
        rows[hop] += 1;
        for (auto e = layer.blocks.indptr[r]; e < layer.blocks.indptr[r + 1]; ++e) {
          const auto at =
              std::lower_bound(row.begin(), row.end(), sources[layer.blocks.indices[e]]);
          counts[hop * degree + static_cast<std::size_t>(at - row.begin())] += 1;
        }
      }
    }
  }
}

// Weights 1, 2, 3, 4, 1, 2, ... by position in every row of `g`.
csr_matrix weighted_by_position(csr_matrix g) {
  g.values.resize(g.indices.size());
  for (std::size_t e = 0; e < g.values.size(); ++e) g.values[e] = 1.0f + static_cast<float>(e % 4);
  return g;
}

// Samples `epochs` epochs of `options` on `g` and tests every (hop, position)'s
// count against `probability` per trial, where a row makes `trials_per_row`
// trials (1 without replacement: is the position drawn; the fanout with
// replacement: each draw). Asserts that a 5% bias of any one position at one
// hop is detected with power >= 0.99.
void expect_position_frequencies(const csr_matrix& g, const sampler_options& options,
                                 const std::vector<double>& probability, double trials_per_row,
                                 std::uint32_t epochs) {
  std::vector<double> counts(2 * degree, 0), rows(2, 0);
  const auto seeds = testing::all_vertices(nodes);
  bulk_sampler sampler(g.view(), options);
  for (std::uint32_t e = 0; e < epochs; ++e) {
    const epoch_plan plan(seeds, batch, options.seed, e);
    count_positions(g.view(), sampler.sample(plan, 0, plan.num_minibatches()), counts, rows);
  }
  const count_test_family family{.cells = counts.size()};
  ASSERT_GE(family.least_power(std::min(rows[0], rows[1]) * trials_per_row, probability, 0.05),
            testing::required_power);
  for (int hop = 0; hop < 2; ++hop) {
    const count_test_family one_hop{.cells = static_cast<std::size_t>(degree),
                                    .alpha = family.alpha / 2};
    const std::vector<double> hop_counts(counts.begin() + hop * degree,
                                         counts.begin() + (hop + 1) * degree);
    const auto verdict = one_hop.test(hop_counts, probability, rows[hop] * trials_per_row);
    EXPECT_FALSE(verdict.rejected)
        << "hop " << hop << ", position " << verdict.worst << ": z = " << verdict.worst_z;
  }
}

// Each position of a row is drawn with probability fanout / degree, at every
// hop: 40 cells (hop, position), a 5% bias (relative, up or down) of any one
// detected with power >= 0.99.
TEST(NodeWiseStatistics, EveryPositionIsDrawnWithProbabilityFanoutOverDegreeAtEveryHop) {
  expect_position_frequencies(
      regular_graph(nodes, degree, 31), {.fanouts = {fanout, fanout}, .seed = 7},
      std::vector<double>(degree, static_cast<double>(fanout) / degree), 1, 16);
}

// Weighted without replacement is successive sampling: position a's inclusion
// probability comes from the weights (testing::successive_sampling_inclusion).
TEST(NodeWiseStatistics, WeightedDrawsIncludeEachPositionAsSuccessiveSamplingDoes) {
  const auto g = weighted_by_position(regular_graph(nodes, degree, 32));
  std::vector<double> weights;
  for (int a = 0; a < degree; ++a) weights.push_back(1.0 + a % 4);
  expect_position_frequencies(g, {.fanouts = {fanout, fanout}, .weighted = true, .seed = 8},
                              testing::successive_sampling_inclusion(weights, fanout), 1, 48);
}

// With replacement every draw is a fresh pick: 1 / degree each, or weight over
// the row's total weight.
TEST(NodeWiseStatistics, DrawsWithReplacementPickEachPositionIndependently) {
  const auto g = regular_graph(nodes, degree, 33);
  expect_position_frequencies(
      g, {.fanouts = {fanout, fanout}, .replacement = kernels::replacement::with, .seed = 2},
      std::vector<double>(degree, 1.0 / degree), fanout, 24);
}

TEST(NodeWiseStatistics, WeightedDrawsWithReplacementPickEachPositionByWeight) {
  const auto g = weighted_by_position(regular_graph(nodes, degree, 34));
  std::vector<double> probability;
  for (int a = 0; a < degree; ++a) probability.push_back((1.0 + a % 4) / 50.0);
  expect_position_frequencies(g,
                              {.fanouts = {fanout, fanout},
                               .replacement = kernels::replacement::with,
                               .weighted = true,
                               .seed = 4},
                              probability, fanout, 64);
}

// Destinations of one minibatch draw independently: two equal-degree
// destinations draw the same positions with probability 1 / C(20, 5) (about
// 63 such pairs among an epoch's pairs at hop 0). Detects 0.1% of the pairs
// drawing alike (a stream shared by some destinations) with power >= 0.99.
TEST(NodeWiseStatistics, DestinationsOfAMinibatchDrawIndependently) {
  const node_wise_run run;
  const auto draws = run.epoch(5, 0);
  const auto [pairs, coincidences] = pairs_and_coincidences(
      draws, [](const row_draw& d) { return std::pair(d.minibatch, d.hop); });
  const coincidence_test test{.pairs = pairs, .chance = 1 / choose(degree, fanout)};
  ASSERT_GE(test.power(0.001), testing::required_power);
  EXPECT_FALSE(test.rejected(coincidences))
      << coincidences << " equal draws among " << pairs << " pairs; expected " << test.expected();
}

// Pairs of one vertex's draws that must be independent, matched by `same`
// between draws `a` and `b` (the same vertex at two hops, in two minibatches,
// two epochs, or under two seeds). Detects 1% of them drawing alike with
// power >= 0.99.
template <class Match>
void expect_independent(const std::vector<row_draw>& a, const std::vector<row_draw>& b, Match same,
                        const char* what) {
  std::map<vertex_t, std::vector<const row_draw*>> by_vertex;
  for (const auto& d : b) by_vertex[d.destination].push_back(&d);
  double pairs = 0;
  std::int64_t coincidences = 0;
  for (const auto& d : a) {
    const auto found = by_vertex.find(d.destination);
    if (found == by_vertex.end()) continue;
    for (const auto* other : found->second) {
      if (!same(d, *other)) continue;
      pairs += 1;
      coincidences += d.positions == other->positions;
    }
  }
  const coincidence_test test{.pairs = pairs, .chance = 1 / choose(degree, fanout)};
  ASSERT_GE(test.power(0.01), testing::required_power) << what << ": only " << pairs << " pairs";
  EXPECT_FALSE(test.rejected(coincidences)) << what << ": " << coincidences << " equal draws among "
                                            << pairs << " pairs; expected " << test.expected();
}

// A vertex that is a destination at hop 0 and hop 1 of a minibatch draws anew.
TEST(NodeWiseStatistics, HopsDrawIndependently) {
  const node_wise_run run;
  std::vector<row_draw> draws;
  for (std::uint32_t e = 0; e < 4; ++e) {
    auto epoch = run.epoch(3, e);
    for (auto& d : epoch) d.minibatch += e * 1000;
    draws.insert(draws.end(), epoch.begin(), epoch.end());
  }
  expect_independent(
      draws, draws,
      [](const row_draw& x, const row_draw& y) {
        return x.minibatch == y.minibatch && x.hop == 0 && y.hop == 1;
      },
      "hop 0 against hop 1");
}

// A vertex that two minibatches of an epoch both reach at hop 1 draws anew in
// each.
TEST(NodeWiseStatistics, MinibatchesOfAnEpochDrawIndependently) {
  const node_wise_run run;
  const auto draws = run.epoch(3, 0);
  expect_independent(
      draws, draws,
      [](const row_draw& x, const row_draw& y) {
        return x.hop == 1 && y.hop == 1 && x.minibatch < y.minibatch;
      },
      "minibatch against minibatch");
}

TEST(NodeWiseStatistics, EpochsDrawIndependently) {
  const node_wise_run run;
  expect_independent(
      run.epoch(3, 0), run.epoch(3, 1),
      [](const row_draw& x, const row_draw& y) { return x.hop == 0 && y.hop == 0; },
      "epoch 0 against epoch 1");
}

TEST(NodeWiseStatistics, SeedsDrawIndependently) {
  const node_wise_run run;
  expect_independent(
      run.epoch(3, 0), run.epoch(4, 0),
      [](const row_draw& x, const row_draw& y) { return x.hop == 0 && y.hop == 0; },
      "seed 3 against seed 4");
}

}  // namespace
}  // namespace bulkgnn::sampler
