// The LABOR-0 sampler (sampler/labor/): each neighbour is kept with
// probability min(1, fanout / degree), the destinations of a minibatch share
// their neighbours' variates, and its minibatches do not depend on the bulk
// size, the thread count or the back end. Statistical tests with stated power
// (tests/support/statistics.hpp).
#include "bulkgnn/core/error.hpp"
#include "bulkgnn/core/parallel.hpp"
#include "bulkgnn/sampler/bulk_sampler.hpp"

#include "plan_digests.hpp"
#include "statistics.hpp"
#include "test_graphs.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <set>

namespace bulkgnn::sampler {
namespace {

using testing::coincidence_test;
using testing::count_test_family;

constexpr int labor_degree = 20, labor_fanout = 5;

sampler_options labor_options(std::vector<std::int64_t> fanouts, std::uint32_t seed) {
  return {.kind = "labor", .fanouts = std::move(fanouts), .seed = seed};
}

// `destinations` vertices, each with `degree` neighbours of its own (vertices
// past the destinations, which have none), or all with the same neighbours.
csr_matrix star_forest(vertex_t destinations, int degree, bool shared) {
  csr_matrix g;
  g.rows = g.cols = destinations + (shared ? 1 : destinations) * degree;
  for (vertex_t v = 0; v < g.rows; ++v) {
    if (v < destinations) {
      const vertex_t first = destinations + (shared ? 0 : v * degree);
      for (int k = 0; k < degree; ++k) g.indices.push_back(first + k);
    }
    g.indptr.push_back(static_cast<edge_t>(g.indices.size()));
  }
  return g;
}

// Each destination's kept positions at hop 0, per minibatch of the epoch.
std::vector<std::vector<std::uint32_t>> kept_positions(const csr_matrix& g,
                                                       std::span<const vertex_t> seeds,
                                                       std::int64_t batch, std::uint32_t seed,
                                                       std::uint32_t epoch) {
  bulk_sampler sampler(g.view(), labor_options({labor_fanout}, seed));
  const epoch_plan plan(seeds, batch, seed, epoch);
  const auto bulk = sampler.sample(plan, 0, plan.num_minibatches());
  const auto& layer = bulk.layers[0];
  std::vector<std::vector<std::uint32_t>> masks(static_cast<std::size_t>(bulk.count()));
  for (std::int64_t j = 0; j < bulk.count(); ++j) {
    const auto sources = layer.sources.segment(j);
    for (auto r = layer.row_offsets[j]; r < layer.row_offsets[j + 1]; ++r) {
      const auto row = g.view().row(sources[r - layer.row_offsets[j]]);
      std::uint32_t mask = 0;
      for (auto e = layer.blocks.indptr[r]; e < layer.blocks.indptr[r + 1]; ++e)
        mask |= 1u << (std::lower_bound(row.begin(), row.end(), sources[layer.blocks.indices[e]]) -
                       row.begin());
      masks[static_cast<std::size_t>(j)].push_back(mask);
    }
  }
  return masks;
}

// Destinations with neighbours of their own draw independently, each position
// kept with probability fanout / degree (a Bernoulli trial per destination and
// position). Detects a 5% bias (relative) of any one position with power >=
// 0.99.
TEST(LaborStatistics, EachNeighbourIsKeptWithProbabilityFanoutOverDegree) {
  constexpr vertex_t destinations = 2000;
  const auto g = star_forest(destinations, labor_degree, false);
  const auto seeds = testing::all_vertices(destinations);
  const double p = static_cast<double>(labor_fanout) / labor_degree;
  std::vector<double> kept(labor_degree, 0);
  double rows = 0;
  for (std::uint32_t epoch = 0; epoch < 30; ++epoch)
    for (const auto& minibatch : kept_positions(g, seeds, 250, 3, epoch))
      for (const auto mask : minibatch) {
        rows += 1;
        for (int a = 0; a < labor_degree; ++a) kept[a] += mask >> a & 1u;
      }
  const count_test_family family{.cells = static_cast<std::size_t>(labor_degree)};
  ASSERT_GE(family.power(rows, p, 0.05), testing::required_power) << rows << " rows";
  ASSERT_GE(family.power(rows, p, -0.05), testing::required_power) << rows << " rows";
  const auto verdict = family.test(kept, std::vector<double>(labor_degree, p), rows);
  EXPECT_FALSE(verdict.rejected) << "position " << verdict.worst << ": z = " << verdict.worst_z;
}

// Destinations of one minibatch with the same neighbours keep the same ones
// (they share the variates), whatever the minibatch; and minibatches, epochs
// and seeds draw anew: equal draws between two of them come by chance,
// (p² + (1-p)²)^degree per pair. Detects 1% of such pairs drawing alike with
// power >= 0.99.
TEST(LaborStatistics, AMinibatchSharesItsVariatesAndMinibatchesEpochsAndSeedsDoNot) {
  constexpr vertex_t destinations = 64;
  const auto g = star_forest(destinations, labor_degree, true);
  const auto seeds = testing::all_vertices(destinations);
  std::vector<std::uint32_t> draws;  // one per minibatch: its destinations agree
  for (const std::uint32_t seed : {1u, 2u})
    for (std::uint32_t epoch = 0; epoch < 150; ++epoch)
      for (const auto& minibatch : kept_positions(g, seeds, 4, seed, epoch)) {
        ASSERT_EQ(std::set<std::uint32_t>(minibatch.begin(), minibatch.end()).size(), 1u)
            << "destinations with the same neighbours kept different ones";
        draws.push_back(minibatch[0]);
      }
  // Every pair of minibatches (of any epoch or seed) should coincide only by
  // chance.
  std::map<std::uint32_t, std::int64_t> counts;
  for (const auto d : draws) ++counts[d];
  std::int64_t coincidences = 0;
  for (const auto& [mask, count] : counts) coincidences += count * (count - 1) / 2;
  const double p = static_cast<double>(labor_fanout) / labor_degree;
  const double n = static_cast<double>(draws.size());
  const coincidence_test test{.pairs = n * (n - 1) / 2,
                              .chance = std::pow(p * p + (1 - p) * (1 - p), labor_degree)};
  ASSERT_GE(test.power(0.01), testing::required_power);
  EXPECT_FALSE(test.rejected(coincidences)) << coincidences << " equal draws among " << test.pairs
                                            << " pairs; expected " << test.expected();
}

// A destination of lower degree has the higher threshold: of the neighbours
// it shares with a destination of higher degree in its minibatch, it keeps
// every one that the other keeps.
TEST(LaborSampler, ALowerDegreeKeepsEveryCommonNeighbourAHigherDegreeKeeps) {
  csr_matrix g;
  g.rows = g.cols = 2 + 40;
  for (int k = 0; k < 10; ++k) g.indices.push_back(2 + k);  // vertex 0: degree 10
  g.indptr.push_back(static_cast<edge_t>(g.indices.size()));
  for (int k = 0; k < 40; ++k) g.indices.push_back(2 + k);  // vertex 1: degree 40
  g.indptr.push_back(static_cast<edge_t>(g.indices.size()));
  for (vertex_t v = 2; v < g.rows; ++v) g.indptr.push_back(static_cast<edge_t>(g.indices.size()));
  bulk_sampler sampler(g.view(), labor_options({4}, 9));
  const std::vector<vertex_t> seeds{0, 1};
  for (std::uint32_t epoch = 0; epoch < 200; ++epoch) {
    const auto mb = sampler.sample(epoch_plan(seeds, 2, 9, epoch), 0, 1).extract(0);
    std::map<vertex_t, std::set<vertex_t>> kept;
    const auto block = mb.blocks[0].view();
    for (vertex_t r = 0; r < block.rows; ++r)
      for (const auto c : block.row(r)) kept[mb.seeds[r]].insert(mb.input_nodes[c]);
    for (const auto t : kept[1])
      if (t < 12) {
        EXPECT_TRUE(kept[0].contains(t)) << "epoch " << epoch << ", neighbour " << t;
      }
  }
}

TEST(LaborSampler, SameMinibatchesForAnyBulkSizeThreadCountAndBackEnd) {
  const auto g = testing::random_graph(600, 8);
  testing::expect_same_digests_for_any_bulk_threads_and_back_end(
      g.view(), labor_options({6, 3}, 4), epoch_plan(testing::all_vertices(600), 24, 4, 2));
}

TEST(LaborSampler, ImpossibleOptionsAreRefusedByName) {
  const auto g = testing::random_graph(50, 9);
  const auto refused = [&](const sampler_options& o, const std::string& names) {
    testing::expect_sampler_refuses(g.view(), o, names);
  };
  refused(labor_options({-1}, 0), "sampler_options.fanouts");
  refused(labor_options({0}, 0), "sampler_options.fanouts");
  auto replacing = labor_options({3}, 0);
  replacing.replacement = kernels::replacement::with;
  refused(replacing, "replacement");
  auto weighted = labor_options({3}, 0);
  weighted.weighted = true;
  refused(weighted, "weighted");
}

}  // namespace
}  // namespace bulkgnn::sampler
