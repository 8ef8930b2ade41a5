// Layer-wise sampling (LADIES, FastGCN) draws what its definition says, with
// stated power. Labelled slow: each test samples 250,000 minibatches.
//
// Every test here is designed (statistics.hpp): false-alarm rate alpha = 1e-4
// over seeds, and a sample large enough that the biases named below are
// detected with probability at least 0.99, which the test asserts before it
// looks at the sample. Seeds are fixed, so each test is deterministic.
#include "bulkgnn/sampler/bulk_sampler.hpp"

#include "program_examples.hpp"
#include "statistics.hpp"
#include "test_graphs.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <iterator>
#include <map>
#include <set>

namespace bulkgnn::sampler {
namespace {

using testing::count_test_family;
using testing::ladies_distribution;
using testing::regular_graph;

// The columns beyond the frontier that a layer-wise minibatch drew at hop 0:
// its sources after its destinations. (A drawn frontier vertex cannot be told
// from one not drawn: every destination is a source, with its self loop.)
std::set<vertex_t> drawn_beyond_frontier(const bulk_sample& bulk, std::int64_t minibatch) {
  const auto sources = bulk.layers[0].sources.segment(minibatch);
  return {sources.begin() + static_cast<std::ptrdiff_t>(bulk.seeds.size(minibatch)), sources.end()};
}

// The least inclusion probability of a column whose 5% bias the layer-wise
// tests claim to detect.
constexpr double claimed_inclusion = 0.08;

// Draws `draws` columns without replacement from `p` (successive sampling, as
// numpy.random.choice(replace=False, p=p) does) for `trials` minibatches of
// `frontier`, and tests the inclusion frequency of each column beyond the
// frontier against its exact probability. Asserts the design: each of these
// is detected with power >= 0.99 at alpha = 1e-4:
// - a 5% bias (relative, up or down) of any one column's inclusion
//   probability, where it is at least 0.08;
// - the weights of every fourth column raised by 5%;
// - drawing with replacement instead.
void expect_successive_sampling(csr_view g, const std::string& kind,
                                std::span<const vertex_t> frontier,
                                const std::map<vertex_t, double>& p, int draws, int trials,
                                std::uint32_t seed) {
  std::vector<double> weights, raised;
  for (const auto& [v, q] : p) {
    weights.push_back(q);
    raised.push_back(weights.size() % 4 == 1 ? q * 1.05 : q);
  }
  const auto all_inclusion = testing::successive_sampling_inclusion(weights, draws);
  const auto all_raised = testing::successive_sampling_inclusion(raised, draws);
  const std::set<vertex_t> in_frontier(frontier.begin(), frontier.end());
  std::vector<vertex_t> columns;
  std::vector<double> inclusion, biased, with_replacement;
  std::size_t i = 0;
  for (const auto& [v, q] : p) {
    if (!in_frontier.count(v)) {
      columns.push_back(v);
      inclusion.push_back(all_inclusion[i]);
      biased.push_back(all_raised[i]);
      with_replacement.push_back(1 - std::pow(1 - q, draws));
    }
    ++i;
  }
  const count_test_family family{.cells = columns.size()};
  std::vector<double> likely;
  std::copy_if(inclusion.begin(), inclusion.end(), std::back_inserter(likely),
               [](double pi) { return pi >= claimed_inclusion; });
  ASSERT_GE(family.least_power(trials, likely, 0.05), testing::required_power);
  auto best_power_against = [&](const std::vector<double>& alternative) {
    double best = 0;
    for (std::size_t c = 0; c < columns.size(); ++c)
      best = std::max(best, family.power(trials, inclusion[c], alternative[c] / inclusion[c] - 1));
    return best;
  };
  ASSERT_GE(best_power_against(biased), testing::required_power) << "weights raised on a quarter";
  ASSERT_GE(best_power_against(with_replacement), testing::required_power) << "with replacement";

  // A one-vertex frontier repeats as every minibatch of an epoch (each draws
  // from its own stream); a larger one is an epoch's one minibatch.
  const int per_epoch = frontier.size() == 1 ? 1000 : 1;
  ASSERT_EQ(trials % per_epoch, 0);
  std::vector<vertex_t> seeds;
  for (int r = 0; r < per_epoch; ++r) seeds.insert(seeds.end(), frontier.begin(), frontier.end());
  std::map<vertex_t, double> count;
  bulk_sampler sampler(
      g,
      sampler_options{.kind = kind, .fanouts = {static_cast<std::int64_t>(draws)}, .seed = seed});
  for (int epoch = 0; epoch < trials / per_epoch; ++epoch) {
    const epoch_plan plan(seeds, static_cast<std::int64_t>(frontier.size()), seed,
                          static_cast<std::uint32_t>(epoch));
    const auto bulk = sampler.sample(plan, 0, per_epoch);
    for (std::int64_t j = 0; j < per_epoch; ++j) {
      const auto drawn = drawn_beyond_frontier(bulk, j);
      ASSERT_LE(drawn.size(), static_cast<std::size_t>(draws));
      for (auto v : drawn) {
        ASSERT_TRUE(p.count(v)) << "drew column " << v << " of probability 0";
        count[v] += 1;
      }
    }
  }
  std::vector<double> observed;
  for (auto v : columns) observed.push_back(count[v]);
  const auto verdict = family.test(observed, inclusion, trials);
  EXPECT_FALSE(verdict.rejected) << "column " << columns[verdict.worst]
                                 << ": z = " << verdict.worst_z << " (" << observed[verdict.worst]
                                 << " of " << trials << ", expected "
                                 << inclusion[verdict.worst] * trials << ")";
}

TEST(LayerWiseStatistics, LadiesDrawsColumnsWithoutReplacementWithTheStatedProbabilities) {
  const auto g = testing::random_graph(120, 22, 30);
  // Three destinations of 3 to 6 neighbours: about 15 candidates of unequal
  // probability, few enough that every one is drawn often.
  std::vector<vertex_t> frontier;
  for (vertex_t v = 0; v < g.rows && frontier.size() < 3; ++v)
    if (g.view().degree(v) >= 3 && g.view().degree(v) <= 6) frontier.push_back(v);
  const auto p = ladies_distribution(g.view(), frontier);
  expect_successive_sampling(g.view(), "ladies", frontier, p, 5, 100000, 9);
}

// The example program frontier-count (sampler/program/examples/) draws by
// what its steps define: Q·(A + I) with Q's entries 1, so column v weighs
// the number of frontier rows of A + I that hold it.
TEST(LayerWiseStatistics, AProgramDrawsWithTheDistributionItsStepsDefine) {
  testing::register_example_programs();
  const auto g = testing::random_graph(120, 22, 30);
  std::vector<vertex_t> frontier;
  for (vertex_t v = 0; v < g.rows && frontier.size() < 3; ++v)
    if (g.view().degree(v) >= 3 && g.view().degree(v) <= 6) frontier.push_back(v);
  std::map<vertex_t, double> p;
  double total = 0;
  for (auto u : frontier) {
    for (auto v : g.view().row(u)) p[v] += 1;
    p[u] += 1;
    total += static_cast<double>(g.view().degree(u) + 1);
  }
  for (auto& [v, q] : p) q /= total;
  expect_successive_sampling(g.view(), "frontier-count", frontier, p, 5, 125000, 9);
}

// `g` with vertex `hub` linked to every other vertex, so that whatever FastGCN
// draws for a minibatch of `hub` stays in it (a minibatch keeps only the drawn
// vertices its destinations link to).
csr_matrix with_hub(csr_view g, vertex_t hub) {
  csr_matrix out;
  out.rows = out.cols = g.rows;
  for (vertex_t v = 0; v < g.rows; ++v) {
    if (v == hub) {
      for (vertex_t u = 0; u < g.rows; ++u)
        if (u != hub) out.indices.push_back(u);
    } else {
      out.indices.insert(out.indices.end(), g.row(v).begin(), g.row(v).end());
    }
    out.indptr.push_back(static_cast<edge_t>(out.indices.size()));
  }
  return out;
}

TEST(LayerWiseStatistics, FastGcnDrawsWithoutReplacementFromOneGlobalDistribution) {
  const auto g = with_hub(regular_graph(24, 4, 24).view(), 7);
  const auto p = ladies_distribution(g.view(), testing::all_vertices(24));
  const std::vector<vertex_t> seed{7};
  expect_successive_sampling(g.view(), "fastgcn", seed, p, 6, 250000, 3);
}

TEST(LayerWiseStatistics, LadiesBlockWeightsAreInverseProbabilitiesRowNormalised) {
  const auto g = testing::random_graph(150, 23, 30);
  const std::vector<vertex_t> frontier{5, 6, 70};
  const auto p = ladies_distribution(g.view(), frontier);
  bulk_sampler sampler(g.view(), sampler_options{.kind = "ladies", .fanouts = {8}, .seed = 1});
  const epoch_plan plan(frontier, 3, 1, 0);
  const auto b = sampler.sample(plan, 0, 1);
  const auto& block = b.layers[0].blocks;
  const auto dst = b.seeds.segment(0);
  const auto src = b.layers[0].sources.segment(0);
  for (std::int64_t r = 0; r < block.rows; ++r) {
    double normaliser = 0;
    for (auto e = block.indptr[r]; e < block.indptr[r + 1]; ++e)
      normaliser += 1.0 / p.at(src[block.indices[e]]);
    for (auto e = block.indptr[r]; e < block.indptr[r + 1]; ++e) {
      const vertex_t v = src[block.indices[e]];
      EXPECT_TRUE(testing::has_edge(g.view(), dst[r], v) || v == dst[r]);
      EXPECT_NEAR(block.values[e], (1.0 / p.at(v)) / normaliser, 1e-5);
    }
  }
}

}  // namespace
}  // namespace bulkgnn::sampler
