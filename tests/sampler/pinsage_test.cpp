// The pinsage sampler (sampler/random_walk/pinsage_sampling.cpp): on a
// graph where no walk visits a vertex twice, each vertex's visit count over
// N walks is binomial with the probability that a walk with termination
// reaches it (tested with stated power); the neighbours kept are the most
// visited; walks never step along a minibatch's excluded edges; and its
// minibatches do not depend on the bulk size, the thread count or the back
// end (split_sampling_test.cpp checks slices, golden_digests_test.cpp what it
// draws).
#include "bulkgnn/core/error.hpp"
#include "bulkgnn/sampler/bulk_sampler.hpp"

#include "plan_digests.hpp"
#include "statistics.hpp"
#include "test_graphs.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <vector>

namespace bulkgnn::sampler {
namespace {

sampler_options pinsage(std::int64_t fanout, std::int64_t walks, std::int64_t traversals,
                        std::int64_t termination_percent) {
  return {.kind = "pinsage",
          .fanouts = {fanout},
          .seed = 8,
          .parameters = {{"walks", walks},
                         {"traversals", traversals},
                         {"termination_percent", termination_percent}}};
}

// Rows hold in-neighbours, a walk's steps: from 0 to 1, 2 or 3; from 1 to 4
// or 5; from 2 to 5, 6 or 7; from 4 to 8; from 5 to 8 or 9; 3 and 6 to 9 are
// dead ends. Every edge goes to a larger id, so no walk visits a vertex twice.
csr_matrix layered_graph() {
  csr_matrix g;
  g.rows = g.cols = 10;
  g.indptr = {0, 3, 5, 8, 8, 9, 11, 11, 11, 11, 11};
  g.indices = {1, 2, 3, 4, 5, 5, 6, 7, 8, 8, 9};
  return g;
}

// The probability that a walk from 0 visits each vertex: at most
// `traversals` steps to a uniform member of the row, each after the first
// taken with probability 1 - p (a walk at a dead end ends).
std::vector<double> visit_probabilities(csr_view g, int traversals, double p) {
  std::vector<double> at(static_cast<std::size_t>(g.rows), 0.0);
  std::vector<double> visited(at.size(), 0.0);
  at[0] = 1;
  for (int s = 0; s < traversals; ++s) {
    std::vector<double> next(at.size(), 0.0);
    for (vertex_t u = 0; u < g.rows; ++u) {
      const auto row = g.row(u);
      const double go_on = s == 0 ? 1 : 1 - p;
      for (const auto w : row) next[w] += at[u] * go_on / static_cast<double>(row.size());
    }
    for (std::size_t u = 0; u < at.size(); ++u) visited[u] += next[u];
    at = std::move(next);
  }
  return visited;
}

// Visit counts of every vertex (global id) from seed 0's row, one map per
// minibatch of an epoch of `minibatches` minibatches that each hold vertex 0.
std::vector<std::map<vertex_t, float>> counts_from_zero(csr_view g, const sampler_options& o,
                                                        std::int64_t minibatches) {
  const std::vector<vertex_t> zeros(static_cast<std::size_t>(minibatches), 0);
  const epoch_plan plan(zeros, 1, o.seed, 0);
  bulk_sampler sampler(g, o);
  std::vector<std::map<vertex_t, float>> counts;
  for (std::int64_t first = 0; first < minibatches; first += 2048) {
    const auto bulk =
        sampler.sample(plan, first, std::min<std::int64_t>(2048, minibatches - first));
    const auto& layer = bulk.layers.front();
    for (std::int64_t j = 0; j < bulk.count(); ++j) {
      const auto sources = layer.sources.segment(j);
      const auto r = layer.row_offsets[j];
      std::map<vertex_t, float> row;
      for (auto e = layer.blocks.indptr[r]; e < layer.blocks.indptr[r + 1]; ++e)
        row[sources[static_cast<std::size_t>(layer.blocks.indices[e])]] = layer.blocks.values[e];
      counts.push_back(std::move(row));
    }
  }
  return counts;
}

// 4 walks of up to 3 steps, 30% termination, from vertex 0 in 150,000
// minibatches: 600,000 walks. Each of vertices 1-9 is visited at most once a
// walk, so its count is binomial; each is tested at a family-wise alpha of
// 1e-4 with power >= 0.99 against a 5% bias of its visit probability.
TEST(PinsageStatistics, VisitCountsFollowTheWalksWithTermination) {
  const auto g = layered_graph();
  constexpr std::int64_t walks = 4;
  constexpr std::int64_t minibatches = 150'000;
  const double trials = static_cast<double>(walks * minibatches);
  const auto expected = visit_probabilities(g.view(), 3, 0.3);
  const std::vector<double> probabilities(expected.begin() + 1, expected.end());
  const testing::count_test_family family{.cells = probabilities.size()};
  ASSERT_GE(family.least_power(trials, probabilities, 0.05), testing::required_power);

  std::vector<double> visits(probabilities.size(), 0);
  for (const auto& row : counts_from_zero(g.view(), pinsage(-1, walks, 3, 30), minibatches))
    for (const auto& [v, count] : row) {
      ASSERT_GE(v, 1) << "the start is no neighbour of itself";
      visits[static_cast<std::size_t>(v - 1)] += count;
    }
  const auto verdict = family.test(visits, probabilities, trials);
  EXPECT_FALSE(verdict.rejected) << "vertex " << verdict.worst + 1 << " at z " << verdict.worst_z;
}

// The 4 walks of one minibatch are independent: vertex 1's count per
// minibatch is Binomial(4, pi_1). Its cells 0, 1, 2 and >= 3 over 150,000
// minibatches, at a family-wise alpha of 1e-4 with power >= 0.99 against a
// 10% bias of any cell (walks sharing a stream make every count 0 or 4).
TEST(PinsageStatistics, WalksOfOneMinibatchAreIndependent) {
  const auto g = layered_graph();
  constexpr std::int64_t minibatches = 150'000;
  const double pi = visit_probabilities(g.view(), 3, 0.3)[1];
  const std::vector<double> probabilities{std::pow(1 - pi, 4), 4 * pi * std::pow(1 - pi, 3),
                                          6 * pi * pi * std::pow(1 - pi, 2),
                                          4 * std::pow(pi, 3) * (1 - pi) + std::pow(pi, 4)};
  const testing::count_test_family family{.cells = probabilities.size()};
  ASSERT_GE(family.least_power(minibatches, probabilities, 0.10), testing::required_power);
  std::vector<double> cells(probabilities.size(), 0);
  for (const auto& row : counts_from_zero(g.view(), pinsage(-1, 4, 3, 30), minibatches)) {
    const auto found = row.find(1);
    const auto count = found == row.end() ? 0 : static_cast<int>(found->second);
    cells[static_cast<std::size_t>(std::min(count, 3))] += 1;
  }
  const auto verdict = family.test(cells, probabilities, minibatches);
  EXPECT_FALSE(verdict.rejected) << "cell " << verdict.worst << " at z " << verdict.worst_z;
}

TEST(PinsageSampler, KeepsTheMostVisitedTheSmallerIdFirstAmongEquals) {
  const auto g = layered_graph();
  const auto all = counts_from_zero(g.view(), pinsage(-1, 6, 3, 20), 300);
  const auto top = counts_from_zero(g.view(), pinsage(2, 6, 3, 20), 300);
  ASSERT_EQ(all.size(), top.size());
  for (std::size_t j = 0; j < all.size(); ++j) {
    std::vector<std::pair<float, vertex_t>> ranked;
    for (const auto& [v, count] : all[j]) ranked.emplace_back(-count, v);
    std::sort(ranked.begin(), ranked.end());
    std::map<vertex_t, float> expected;
    for (std::size_t i = 0; i < std::min<std::size_t>(2, ranked.size()); ++i)
      expected[ranked[i].second] = -ranked[i].first;
    EXPECT_EQ(top[j], expected) << "minibatch " << j;
  }
}

TEST(PinsageSampler, NoTerminationWalksEveryStep) {
  // A path 0 -> 1 -> ... -> 5: 3 steps without termination visit 1, 2 and 3
  // once each per walk.
  csr_matrix path;
  path.rows = path.cols = 6;
  path.indptr = {0, 1, 2, 3, 4, 5, 5};
  path.indices = {1, 2, 3, 4, 5};
  for (const auto& row : counts_from_zero(path.view(), pinsage(-1, 7, 3, 0), 20))
    EXPECT_EQ(row, (std::map<vertex_t, float>{{1, 7.0f}, {2, 7.0f}, {3, 7.0f}}));
}

TEST(PinsageSampler, SameMinibatchesForAnyBulkSizeThreadCountAndBackEnd) {
  const auto g = testing::random_graph(600, 8);
  auto o = pinsage(5, 8, 3, 40);
  o.fanouts = {5, 3};
  bulkgnn::testing::expect_same_digests_for_any_bulk_threads_and_back_end(
      g.view(), o, epoch_plan(testing::all_vertices(600), 24, 6, 2));
}

TEST(PinsageSampler, RefusesImpossibleParametersByName) {
  const auto g = testing::random_graph(50, 9);
  bulkgnn::testing::expect_sampler_refuses(g.view(), pinsage(5, 0, 3, 50), "walks");
  bulkgnn::testing::expect_sampler_refuses(g.view(), pinsage(5, 10, 32, 50), "traversals");
  bulkgnn::testing::expect_sampler_refuses(g.view(), pinsage(5, 10, 3, 100), "termination_percent");
}

}  // namespace
}  // namespace bulkgnn::sampler
