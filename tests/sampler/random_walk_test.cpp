// The random-walk sampler (sampler/random_walk/): its end vertices follow
// the L-step walk distribution, walks of different destinations are
// independent, visit counts add up, and its minibatches do not depend on the
// bulk size, the thread count or the back end (bulk_sampler_test.cpp checks
// fetched rows, split_sampling_test.cpp the split over ranks).
#include "bulkgnn/core/error.hpp"
#include "bulkgnn/core/parallel.hpp"
#include "bulkgnn/sampler/bulk_sampler.hpp"

#include "plan_digests.hpp"
#include "statistics.hpp"
#include "test_graphs.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <map>

namespace bulkgnn::sampler {
namespace {

using testing::chi_square_critical;

// Pearson's statistics of several tables summed, with their degrees of
// freedom: one chi-square test of them all.
struct chi_square_sum {
  double statistic = 0;
  int degrees = 0;

  void add(const std::vector<double>& observed, const std::vector<double>& expected) {
    const auto test = testing::pearson_pooled(observed, expected);
    statistic += test.statistic;
    degrees += test.degrees;
  }
};

// The noncentrality N · Σ (q - p)² / p that true cell probabilities q give a
// test of p over N trials (cells where p = 0 left out: a draw there fails the
// test by itself).
double noncentrality(const std::vector<double>& p, const std::vector<double>& q, double trials) {
  double lambda = 0;
  for (std::size_t i = 0; i < p.size(); ++i)
    if (p[i] > 0) lambda += (q[i] - p[i]) * (q[i] - p[i]) / p[i];
  return trials * lambda;
}

// Row v of P^length, P = D̃⁻¹(A + I): a step moves to a uniform member of
// the row with its self loop (a self loop stored in A counts once).
std::vector<double> walk_distribution(csr_view g, vertex_t v, int length) {
  std::vector<double> at(static_cast<std::size_t>(g.rows), 0.0);
  at[v] = 1;
  for (int s = 0; s < length; ++s) {
    std::vector<double> next(at.size(), 0.0);
    for (vertex_t u = 0; u < g.rows; ++u) {
      if (at[u] == 0) continue;
      const auto row = g.row(u);
      const bool has_loop = std::binary_search(row.begin(), row.end(), u);
      const double share = at[u] / static_cast<double>(row.size() + (has_loop ? 0 : 1));
      for (const auto w : row) next[w] += share;
      if (!has_loop) next[u] += share;
    }
    at = std::move(next);
  }
  return at;
}

sampler_options walk_options(std::vector<std::int64_t> fanouts, std::int64_t length,
                             std::uint32_t seed) {
  return {.kind = "random-walk",
          .fanouts = std::move(fanouts),
          .seed = seed,
          .parameters = {{"walk_length", length}}};
}

// For each epoch, the end vertex (global id) of every seed's one walk.
std::vector<std::vector<vertex_t>> one_walk_ends(csr_view g, std::span<const vertex_t> seeds,
                                                 std::int64_t length, int epochs) {
  bulk_sampler sampler(g, walk_options({1}, length, 7));
  std::vector<std::vector<vertex_t>> ends;
  for (int epoch = 0; epoch < epochs; ++epoch) {
    const epoch_plan plan(seeds, static_cast<std::int64_t>(seeds.size()), 7,
                          static_cast<std::uint32_t>(epoch));
    const auto mb = sampler.sample(plan, 0, 1).extract(0);
    const auto& block = mb.blocks[0];
    std::vector<vertex_t> by_seed(seeds.size());
    for (std::size_t i = 0; i < mb.seeds.size(); ++i) {
      const auto row = block.view().row(static_cast<vertex_t>(i));
      EXPECT_EQ(row.size(), 1u) << "one walk ends at one vertex";
      by_seed[std::find(seeds.begin(), seeds.end(), mb.seeds[i]) - seeds.begin()] =
          mb.input_nodes[row[0]];
    }
    ends.push_back(std::move(by_seed));
  }
  return ends;
}

// Every vertex of a 40-vertex graph walks 3 steps once per epoch, all in one
// minibatch, over 3000 epochs: one chi-square test of every vertex's end
// distribution (~1300 degrees of freedom) at alpha = 1e-4. Design: walks one
// step short (or one step long) are detected with power >= 0.99.
TEST(RandomWalkStatistics, EndVerticesFollowTheWalkDistribution) {
  const auto g = testing::random_graph(40, 31, 10);
  const auto seeds = testing::all_vertices(40);
  constexpr int epochs = 3000, length = 3;
  const auto ends = one_walk_ends(g.view(), seeds, length, epochs);
  chi_square_sum test;
  double short_lambda = 0, long_lambda = 0;
  for (std::size_t i = 0; i < seeds.size(); ++i) {
    const auto p = walk_distribution(g.view(), seeds[i], length);
    short_lambda += noncentrality(p, walk_distribution(g.view(), seeds[i], length - 1), epochs);
    long_lambda += noncentrality(p, walk_distribution(g.view(), seeds[i], length + 1), epochs);
    std::vector<double> observed(p.size(), 0.0), expected(p.size());
    for (const auto& epoch : ends) observed[epoch[i]] += 1;
    for (std::size_t u = 0; u < p.size(); ++u) {
      expected[u] = epochs * p[u];
      if (p[u] == 0) {
        EXPECT_EQ(observed[u], 0) << seeds[i] << " ended at unreachable " << u;
      }
    }
    test.add(observed, expected);
  }
  const double critical = chi_square_critical(test.degrees);
  ASSERT_GE(testing::chi_square_power(test.degrees, short_lambda, critical),
            testing::required_power);
  ASSERT_GE(testing::chi_square_power(test.degrees, long_lambda, critical),
            testing::required_power);
  EXPECT_LT(test.statistic, critical) << test.degrees << " degrees";
}

// Two destinations of one minibatch with the same degree: were the
// destination left out of the stream key, both would draw the same positions
// at every step and their ends would be tied. Their joint end distribution
// must be the product of the two walk distributions. Design: ends tied (the
// d + 1 outcomes of a step from degree d, each with the other's end fixed)
// have noncentrality at least epochs · d, detected with power >= 0.99.
TEST(RandomWalkStatistics, WalksOfDestinationsInOneMinibatchAreIndependent) {
  const auto g = testing::random_graph(40, 31, 10);
  const auto seeds = testing::all_vertices(40);
  std::pair<vertex_t, vertex_t> pair{-1, -1};
  for (vertex_t a = 0; a < 40 && pair.first < 0; ++a)
    for (vertex_t b = a + 1; b < 40; ++b)
      if (g.view().degree(a) == g.view().degree(b) && g.view().degree(a) >= 3) {
        pair = {a, b};
        break;
      }
  ASSERT_GE(pair.first, 0);
  constexpr int epochs = 6000, length = 1;
  const auto ends = one_walk_ends(g.view(), seeds, length, epochs);
  const auto pa = walk_distribution(g.view(), pair.first, length);
  const auto pb = walk_distribution(g.view(), pair.second, length);
  std::map<std::pair<vertex_t, vertex_t>, double> joint;
  for (const auto& epoch : ends) joint[{epoch[pair.first], epoch[pair.second]}] += 1;
  std::vector<double> observed, expected;
  for (vertex_t u = 0; u < 40; ++u)
    for (vertex_t w = 0; w < 40; ++w)
      if (pa[u] > 0 && pb[w] > 0) {
        observed.push_back(joint[{u, w}]);
        expected.push_back(epochs * pa[u] * pb[w]);
      }
  chi_square_sum test;
  test.add(observed, expected);
  const double tied =
      static_cast<double>(epochs) * static_cast<double>(g.view().degree(pair.first));
  ASSERT_GE(testing::chi_square_power(test.degrees, tied, chi_square_critical(test.degrees)),
            testing::required_power);
  EXPECT_LT(test.statistic, chi_square_critical(test.degrees));
}

// With several walks per vertex the block values are visit counts: each row
// sums to the number of walks, and the counts summed over epochs follow
// fanout · P^L. Design: walks one step short are detected with power >= 0.99.
TEST(RandomWalkStatistics, VisitCountsSumToTheWalksAndFollowTheWalkDistribution) {
  const auto g = testing::random_graph(40, 32, 10);
  const std::vector<vertex_t> seeds{2, 11, 25};
  constexpr int epochs = 1500, length = 2, walks = 5;
  bulk_sampler sampler(g.view(), walk_options({walks}, length, 3));
  std::vector<std::vector<double>> visits(seeds.size(), std::vector<double>(40, 0.0));
  for (int epoch = 0; epoch < epochs; ++epoch) {
    const epoch_plan plan(seeds, 3, 3, static_cast<std::uint32_t>(epoch));
    const auto mb = sampler.sample(plan, 0, 1).extract(0);
    const auto block = mb.blocks[0].view();
    ASSERT_TRUE(block.weighted());
    for (vertex_t i = 0; i < block.rows; ++i) {
      const auto s = std::find(seeds.begin(), seeds.end(), mb.seeds[i]) - seeds.begin();
      double total = 0;
      for (edge_t e = block.indptr[i]; e < block.indptr[i + 1]; ++e) {
        EXPECT_EQ(block.values[e], std::round(block.values[e]));
        visits[s][mb.input_nodes[block.indices[e]]] += block.values[e];
        total += block.values[e];
      }
      EXPECT_EQ(total, walks);
    }
  }
  chi_square_sum test;
  double short_lambda = 0;
  for (std::size_t i = 0; i < seeds.size(); ++i) {
    const auto p = walk_distribution(g.view(), seeds[i], length);
    short_lambda +=
        noncentrality(p, walk_distribution(g.view(), seeds[i], length - 1), epochs * walks);
    std::vector<double> expected(p.size());
    for (std::size_t u = 0; u < p.size(); ++u) expected[u] = epochs * walks * p[u];
    test.add(visits[i], expected);
  }
  ASSERT_GE(
      testing::chi_square_power(test.degrees, short_lambda, chi_square_critical(test.degrees)),
      testing::required_power);
  EXPECT_LT(test.statistic, chi_square_critical(test.degrees));
}

TEST(RandomWalkSampler, SameMinibatchesForAnyBulkSizeThreadCountAndBackEnd) {
  const auto g = testing::random_graph(500, 6);
  const auto options = walk_options({4, 3}, 3, 5);
  testing::expect_same_digests_for_any_bulk_threads_and_back_end(
      g.view(), options, epoch_plan(testing::all_vertices(500), 20, options.seed, 1));
}

TEST(RandomWalkSampler, ImpossibleOptionsAreRefusedByName) {
  const auto g = testing::random_graph(50, 9);
  const auto refused = [&](const sampler_options& o, const std::string& names) {
    testing::expect_sampler_refuses(g.view(), o, names);
  };
  refused(walk_options({-1}, 2, 0), "sampler_options.fanouts");
  refused(walk_options({70000}, 2, 0), "sampler_options.fanouts");
  refused(walk_options({3}, 0, 0), "walk_length");
  refused(walk_options({3}, 64, 0), "walk_length");
  auto replacing = walk_options({3}, 2, 0);
  replacing.replacement = kernels::replacement::with;
  refused(replacing, "sampler_options.replacement");
  refused({.kind = "sage", .fanouts = {3}, .parameters = {{"walk_length", 2}}}, "walk_length");
  refused({.kind = "random_walk", .fanouts = {3}}, "sampler_options.kind");
}

}  // namespace
}  // namespace bulkgnn::sampler
