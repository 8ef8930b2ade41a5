// The LABOR-0 sampler (sampler/labor/): each neighbour is kept with
// probability min(1, fanout / degree), the destinations of a minibatch share
// their neighbours' variates, and its minibatches do not depend on the bulk
// size, the thread count or the back end. Statistical tests with stated power
// (tests/support/statistics.hpp).
#include "bulkgnn/core/error.hpp"
#include "bulkgnn/core/parallel.hpp"
#include "bulkgnn/kernels/sample_rows.hpp"
#include "bulkgnn/sampler/bulk_sampler.hpp"

#include "plan_digests.hpp"
#include "statistics.hpp"
#include "test_graphs.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <numeric>
#include <random>
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

// LABOR-i and LABOR-* (sampler "labor-star"): importance sampling against
// its definition, first at the kernel, where each entry's probability is
// known from its weight.

// `destinations` vertices over a pool of `pool` vertices (numbered after
// them), destination s with 4 + (7s mod 27) distinct neighbours from the
// pool: overlapping neighbourhoods of unequal degrees, so that the importance
// steps move the importances away from 1.
csr_matrix overlapping_neighbourhoods(vertex_t destinations, vertex_t pool) {
  csr_matrix g;
  g.rows = g.cols = destinations + pool;
  std::mt19937_64 gen(41);
  for (vertex_t v = 0; v < g.rows; ++v) {
    if (v < destinations) {
      std::vector<vertex_t> all(static_cast<std::size_t>(pool));
      std::iota(all.begin(), all.end(), destinations);
      std::shuffle(all.begin(), all.end(), gen);
      all.resize(static_cast<std::size_t>(4 + (7 * v) % 27));
      std::sort(all.begin(), all.end());
      g.indices.insert(g.indices.end(), all.begin(), all.end());
    }
    g.indptr.push_back(static_cast<edge_t>(g.indices.size()));
  }
  return g;
}

// Over `epochs` draws of one minibatch holding every destination: how often
// each entry (row, position) was kept, its probability 1 / weight (the same
// weight every time), and how often each column was kept by any row.
struct importance_draws {
  std::vector<std::vector<double>> kept, probability;
  std::map<vertex_t, double> column_kept;
  double epochs = 0;

  // Σ_t max_s p_st: the expected count of distinct columns.
  [[nodiscard]] std::map<vertex_t, double> column_probability(csr_view g) const {
    std::map<vertex_t, double> largest;
    for (std::size_t s = 0; s < kept.size(); ++s)
      for (std::size_t e = 0; e < kept[s].size(); ++e) {
        double& p = largest[g.row(static_cast<vertex_t>(s))[e]];
        p = std::max(p, probability[s][e]);
      }
    return largest;
  }
  [[nodiscard]] double expected_columns(csr_view g) const {
    double sum = 0;
    for (const auto& [t, p] : column_probability(g)) sum += p;
    return sum;
  }
};

importance_draws draw_with_importance(csr_view g, vertex_t destinations, std::int64_t fanout,
                                      std::int64_t iterations, std::uint32_t epochs) {
  segmented_vertices rows;
  rows.push_segment(testing::all_vertices(destinations));
  const std::vector<std::uint32_t> minibatch(static_cast<std::size_t>(destinations), 0);
  importance_draws d;
  d.epochs = epochs;
  for (vertex_t s = 0; s < destinations; ++s) {
    d.kept.emplace_back(static_cast<std::size_t>(g.degree(s)), 0.0);
    d.probability.emplace_back(static_cast<std::size_t>(g.degree(s)), 0.0);
  }
  for (std::uint32_t epoch = 0; epoch < epochs; ++epoch) {
    const auto drawn = kernels::sample_rows_with_importance(
        executor{backend::cpu}, g, rows, {.seed = 6, .epoch = epoch, .minibatch_of_row = minibatch},
        fanout, iterations);
    std::set<vertex_t> columns;
    for (vertex_t s = 0; s < destinations; ++s) {
      const auto row = g.row(s);
      const auto values = drawn.view().row_values(s);
      const auto kept = drawn.view().row(s);
      for (std::size_t k = 0; k < kept.size(); ++k) {
        const auto e = static_cast<std::size_t>(std::lower_bound(row.begin(), row.end(), kept[k]) -
                                                row.begin());
        const double p = 1.0 / static_cast<double>(values[k]);
        double& known = d.probability[static_cast<std::size_t>(s)][e];
        if (known == 0) known = p;
        EXPECT_EQ(known, p) << "entry (" << s << ", " << e << ") changed weight";
        d.kept[static_cast<std::size_t>(s)][e] += 1;
        columns.insert(kept[k]);
      }
    }
    for (const vertex_t t : columns) d.column_kept[t] += 1;
  }
  return d;
}

constexpr vertex_t importance_destinations = 24, importance_pool = 60;
constexpr std::int64_t importance_fanout = 4;

// Every entry is kept with the probability its weight inverts, those
// probabilities sum to the fanout in every row that has more neighbours,
// and a column is in the minibatch with the largest of its rows'
// probabilities (the rows share its variate). LABOR-* starves some entries
// (probabilities below 1e-5 here), whose weight no draw shows: a row's sum
// is checked where every entry was seen, which most rows are. Detects a 20%
// bias (relative) of any one entry or column of probability in [0.05, 0.8]
// with power >= 0.99.
TEST(LaborImportanceStatistics, EntriesAndColumnsAreKeptWithTheirProbabilities) {
  const auto g = overlapping_neighbourhoods(importance_destinations, importance_pool);
  const auto testable = [](const std::vector<double>& probabilities) {
    std::vector<double> out;
    for (const double p : probabilities)
      if (p >= 0.05 && p <= 0.8) out.push_back(p);
    return out;
  };
  for (const std::int64_t iterations : {1, -1}) {
    const auto d = draw_with_importance(g.view(), importance_destinations, importance_fanout,
                                        iterations, 40000);
    std::vector<double> counts, probabilities;
    int rows_seen_whole = 0;
    for (vertex_t s = 0; s < importance_destinations; ++s) {
      const auto& kept = d.kept[static_cast<std::size_t>(s)];
      const auto& row = d.probability[static_cast<std::size_t>(s)];
      for (std::size_t e = 0; e < kept.size(); ++e) {
        EXPECT_LE(row[e], 1.0) << "entry (" << s << ", " << e << ") weighs below 1";
        if (row[e] == 1.0) {
          EXPECT_EQ(kept[e], d.epochs) << "a certain entry dropped";
        } else if (row[e] > 0) {
          counts.push_back(kept[e]);
          probabilities.push_back(row[e]);
        }
      }
      if (g.view().degree(s) <= importance_fanout || std::ranges::count(row, 0.0) > 0) continue;
      ++rows_seen_whole;
      EXPECT_NEAR(std::accumulate(row.begin(), row.end(), 0.0), importance_fanout, 1e-5)
          << "row " << s << ", steps " << iterations;
    }
    EXPECT_GE(rows_seen_whole, importance_destinations / 2) << "steps " << iterations;
    const count_test_family entries{.cells = counts.size()};
    ASSERT_GE(entries.least_power(d.epochs, testable(probabilities), 0.2), testing::required_power);
    const auto verdict = entries.test(counts, probabilities, d.epochs);
    EXPECT_FALSE(verdict.rejected)
        << "entry " << verdict.worst << ": z = " << verdict.worst_z << ", steps " << iterations;
    std::vector<double> column_counts, column_probabilities;
    for (const auto& [t, p] : d.column_probability(g.view())) {
      if (p == 0 || p == 1.0) continue;
      column_counts.push_back(d.column_kept.contains(t) ? d.column_kept.at(t) : 0.0);
      column_probabilities.push_back(p);
    }
    const count_test_family columns{.cells = column_counts.size()};
    ASSERT_GE(columns.least_power(d.epochs, testable(column_probabilities), 0.2),
              testing::required_power);
    const auto column_verdict = columns.test(column_counts, column_probabilities, d.epochs);
    EXPECT_FALSE(column_verdict.rejected)
        << "column " << column_verdict.worst << ": z = " << column_verdict.worst_z << ", steps "
        << iterations;
  }
}

// The importance steps lower the expected count of distinct columns below
// LABOR-0's (the point of LABOR-*), each step by a visible amount here, and
// LABOR-* stops no higher than one step; the mean count drawn follows (its
// standard error is below 0.1 here, the gaps several times that).
TEST(LaborImportanceStatistics, StepsLowerTheExpectedCountOfDistinctVertices) {
  const auto g = overlapping_neighbourhoods(importance_destinations, importance_pool);
  std::map<std::int64_t, double> expected, drawn;
  for (const std::int64_t iterations : {0, 1, 2, -1}) {
    const auto d = draw_with_importance(g.view(), importance_destinations, importance_fanout,
                                        iterations, 2000);
    expected[iterations] = d.expected_columns(g.view());
    double total = 0;
    for (const auto& [t, count] : d.column_kept) total += count;
    drawn[iterations] = total / d.epochs;
  }
  EXPECT_LT(expected[1], expected[0] - 1.0);
  EXPECT_LT(expected[2], expected[1]);
  EXPECT_LE(expected[-1], expected[1]);
  EXPECT_LT(drawn[1], drawn[0] - 0.5);
  EXPECT_LT(drawn[-1], drawn[0] - 0.5);
}

// Destination 0 keeps its 4 neighbours whole (fanout 5), so they are in the
// minibatch for sure; LABOR-* steers destination 1, of 10 neighbours
// including those 4, onto them (their probability tends to 1 as the steps
// go on) and shares the rest of its expected 5 among the other 6 alike.
TEST(LaborImportanceStatistics, LaborStarSteersADestinationOntoVerticesItGetsForFree) {
  csr_matrix g;
  g.rows = g.cols = 2 + 10;
  for (int k = 0; k < 4; ++k) g.indices.push_back(2 + k);
  g.indptr.push_back(static_cast<edge_t>(g.indices.size()));
  for (int k = 0; k < 10; ++k) g.indices.push_back(2 + k);
  g.indptr.push_back(static_cast<edge_t>(g.indices.size()));
  for (vertex_t v = 2; v < g.rows; ++v) g.indptr.push_back(static_cast<edge_t>(g.indices.size()));
  const auto d = draw_with_importance(g.view(), 2, 5, -1, 2000);
  const auto& row = d.probability[1];
  for (std::size_t e = 0; e < 4; ++e) EXPECT_GT(row[e], 0.99) << "shared neighbour " << e;
  for (std::size_t e = 5; e < 10; ++e) EXPECT_NEAR(row[e], row[4], 1e-6) << "neighbour " << e;
  EXPECT_NEAR(std::accumulate(row.begin(), row.end(), 0.0), 5.0, 1e-5);
  EXPECT_LT(row[4], 0.2);
}

sampler_options labor_star_options(std::vector<std::int64_t> fanouts, std::uint32_t seed,
                                   std::int64_t iterations = -1) {
  return {.kind = "labor-star",
          .fanouts = std::move(fanouts),
          .seed = seed,
          .parameters = {{"importance_iterations", iterations}}};
}

// With no importance step the sampler keeps LABOR-0's edges, each
// destination's weights all equal (its mean).
TEST(LaborImportanceSampler, NoStepKeepsLabor0sEdgesAndAveragesThem) {
  const auto g = testing::random_graph(400, 12);
  const epoch_plan plan(testing::all_vertices(400), 40, 3, 1);
  bulk_sampler labor0(g.view(), labor_options({6, 3}, 3));
  bulk_sampler stepless(g.view(), labor_star_options({6, 3}, 3, 0));
  const auto expected = labor0.sample(plan, 0, plan.num_minibatches());
  const auto got = stepless.sample(plan, 0, plan.num_minibatches());
  for (std::size_t h = 0; h < got.layers.size(); ++h) {
    const auto& blocks = got.layers[h].blocks;
    EXPECT_EQ(blocks.indptr, expected.layers[h].blocks.indptr) << "hop " << h;
    EXPECT_EQ(blocks.indices, expected.layers[h].blocks.indices) << "hop " << h;
    for (std::int64_t r = 0; r < blocks.rows; ++r)
      for (const float w : blocks.view().row_values(static_cast<vertex_t>(r)))
        EXPECT_FLOAT_EQ(w, 1.0f / static_cast<float>(blocks.view().degree(r))) << "hop " << h;
  }
}

// Each destination's weights are positive and sum to 1 (the self-normalised
// estimate of its neighbours' mean).
TEST(LaborImportanceSampler, EachDestinationsWeightsSumToOne) {
  const auto g = testing::random_graph(500, 13);
  bulk_sampler sampler(g.view(), labor_star_options({8, 4}, 4));
  const epoch_plan plan(testing::all_vertices(500), 50, 4, 0);
  const auto bulk = sampler.sample(plan, 0, plan.num_minibatches());
  for (const auto& layer : bulk.layers)
    for (std::int64_t r = 0; r < layer.blocks.rows; ++r) {
      const auto values = layer.blocks.view().row_values(static_cast<vertex_t>(r));
      if (values.empty()) continue;
      double sum = 0;
      for (const float w : values) {
        EXPECT_GT(w, 0.0f);
        sum += w;
      }
      EXPECT_NEAR(sum, 1.0, 1e-5) << "row " << r;
    }
}

// Over two hops of a random graph a minibatch reaches fewer vertices than
// LABOR-0's (means over 40 epochs; the gap is many standard errors).
TEST(LaborImportanceSampler, MinibatchesReachFewerVerticesThanLabor0s) {
  const auto g = testing::random_graph(3000, 14);
  const auto mean_inputs = [&](const sampler_options& options) {
    bulk_sampler sampler(g.view(), options);
    double inputs = 0, minibatches = 0;
    for (std::uint32_t epoch = 0; epoch < 40; ++epoch) {
      const epoch_plan plan(testing::all_vertices(3000), 300, 5, epoch);
      const auto bulk = sampler.sample(plan, 0, plan.num_minibatches());
      for (std::int64_t j = 0; j < bulk.count(); ++j) {
        inputs += static_cast<double>(bulk.layers.back().sources.size(j));
        minibatches += 1;
      }
    }
    return inputs / minibatches;
  };
  const double labor0 = mean_inputs(labor_options({10, 10}, 5));
  const double star = mean_inputs(labor_star_options({10, 10}, 5));
  EXPECT_LT(star, 0.97 * labor0) << "labor-star " << star << " against labor " << labor0;
}

TEST(LaborImportanceSampler, SameMinibatchesForAnyBulkSizeThreadCountAndBackEnd) {
  const auto g = testing::random_graph(600, 8);
  for (const std::int64_t iterations : {2, -1})
    testing::expect_same_digests_for_any_bulk_threads_and_back_end(
        g.view(), labor_star_options({6, 3}, 4, iterations),
        epoch_plan(testing::all_vertices(600), 24, 4, 2));
}

TEST(LaborImportanceSampler, ImpossibleOptionsAreRefusedByName) {
  const auto g = testing::random_graph(50, 9);
  const auto refused = [&](const sampler_options& o, const std::string& names) {
    testing::expect_sampler_refuses(g.view(), o, names);
  };
  refused(labor_star_options({0}, 0), "sampler_options.fanouts");
  refused(labor_star_options({3}, 0, -2), "importance_iterations");
  refused(labor_star_options({3}, 0, 101), "importance_iterations");
  auto weighted = labor_star_options({3}, 0);
  weighted.weighted = true;
  refused(weighted, "weighted");
}

}  // namespace
}  // namespace bulkgnn::sampler
