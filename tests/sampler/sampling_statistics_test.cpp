// The drawn distributions match their definitions: chi-square tests over many
// epochs (each epoch is an independent stream) with fixed seeds.
#include "bulkgnn/sampler/bulk_sampler.hpp"

#include "test_graphs.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <numeric>
#include <set>

namespace bulkgnn::sampler {
namespace {

using testing::chi_square_critical;

// Chi-square statistic (testing::pearson_pooled) next to its critical value.
struct chi_square_result {
  double statistic = 0;
  double critical = 0;
};

chi_square_result chi_square(const std::vector<double>& observed,
                             const std::vector<double>& expected) {
  const auto test = testing::pearson_pooled(observed, expected);
  return {test.statistic, chi_square_critical(test.degrees)};
}

// One-minibatch samples of `seeds` for epochs 0..epochs-1.
template <class Visit>
void sample_epochs(csr_view g, const sampler_options& options, std::span<const vertex_t> seeds,
                   int epochs, Visit visit) {
  bulk_sampler sampler(g, options);
  for (int epoch = 0; epoch < epochs; ++epoch) {
    const epoch_plan plan(seeds, static_cast<std::int64_t>(seeds.size()), options.seed,
                          static_cast<std::uint32_t>(epoch));
    visit(sampler.sample(plan, 0, 1));
  }
}

TEST(NodeWiseStatistics, SamplesEachNeighbourWithProbabilitySOverDegree) {
  const auto g = testing::random_graph(200, 21, 60);
  vertex_t hub = 0;
  for (vertex_t v = 0; v < 200; ++v)
    if (g.view().degree(v) > g.view().degree(hub)) hub = v;
  const auto degree = g.view().degree(hub);
  ASSERT_GE(degree, 20);
  constexpr int fanout = 5, epochs = 8000;
  std::map<vertex_t, double> inclusions;
  const std::vector<vertex_t> seeds{hub};
  sample_epochs(g.view(), sampler_options{.fanouts = {fanout}, .seed = 4}, seeds, epochs,
                [&](const bulk_sample& b) {
                  const auto src = b.layers[0].sources.segment(0);
                  ASSERT_EQ(src.size(), static_cast<std::size_t>(fanout + 1));
                  for (std::size_t i = 1; i < src.size(); ++i) inclusions[src[i]] += 1;
                });
  std::vector<double> observed, expected;
  for (auto v : g.view().row(hub)) {
    observed.push_back(inclusions[v]);
    expected.push_back(static_cast<double>(epochs) * fanout / static_cast<double>(degree));
  }
  EXPECT_EQ(inclusions.size(), static_cast<std::size_t>(degree)) << "drew a non-neighbour";
  // The inclusion counts sum to epochs · fanout, which costs one degree of
  // freedom as in a multinomial test.
  const auto test = chi_square(observed, expected);
  EXPECT_LT(test.statistic, test.critical);
}

// LADIES' column distribution for one frontier, from the definition:
// p(v) ∝ Σ_{u∈F} Â(u,v)², Â = D̃⁻¹(A + I).
std::map<vertex_t, double> ladies_distribution(csr_view g, std::span<const vertex_t> frontier) {
  std::map<vertex_t, double> p;
  double total = 0;
  for (auto u : frontier) {
    const double w = 1.0 / std::pow(static_cast<double>(g.degree(u)) + 1.0, 2);
    for (auto v : g.row(u)) p[v] += w;
    p[u] += w;
    total += w * static_cast<double>(g.degree(u) + 1);
  }
  for (auto& [v, q] : p) q /= total;
  return p;
}

TEST(LayerWiseStatistics, LadiesDrawsColumnsWithTheStatedProbabilities) {
  const auto g = testing::random_graph(120, 22, 30);
  const std::vector<vertex_t> frontier{3, 17, 40, 41, 90};
  const auto p = ladies_distribution(g.view(), frontier);
  constexpr int epochs = 20000;
  // With one draw per minibatch the drawn vertex is the one source beyond the
  // frontier, or none when the draw fell on a frontier vertex.
  std::map<vertex_t, double> drawn;
  double inside_frontier = 0;
  const std::set<vertex_t> frontier_set(frontier.begin(), frontier.end());
  bulk_sampler sampler(g.view(), sampler_options{.kind = "ladies", .fanouts = {1}, .seed = 9});
  for (int epoch = 0; epoch < epochs; ++epoch) {
    const epoch_plan plan(frontier, 5, 9, static_cast<std::uint32_t>(epoch));
    const auto b = sampler.sample(plan, 0, 1);
    const auto src = b.layers[0].sources.segment(0);
    ASSERT_LE(src.size(), frontier.size() + 1);
    if (src.size() == frontier.size())
      inside_frontier += 1;
    else
      drawn[src.back()] += 1;
  }
  std::vector<double> observed{inside_frontier}, expected{0};
  for (const auto& [v, q] : p) {
    if (frontier_set.count(v)) {
      expected[0] += q * epochs;
    } else {
      observed.push_back(drawn[v]);
      expected.push_back(q * epochs);
    }
  }
  double drawn_total = 0;
  for (const auto& [v, count] : drawn) {
    EXPECT_TRUE(p.count(v)) << "drew vertex " << v << " with probability 0";
    drawn_total += count;
  }
  EXPECT_EQ(drawn_total + inside_frontier, epochs);
  const auto test = chi_square(observed, expected);
  EXPECT_LT(test.statistic, test.critical);
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

TEST(LayerWiseStatistics, FastGcnDrawsFromOneGlobalDistribution) {
  const auto g = with_hub(testing::random_graph(60, 24, 20).view(), 7);
  std::vector<vertex_t> everyone(60);
  std::iota(everyone.begin(), everyone.end(), 0);
  const auto p = ladies_distribution(g.view(), everyone);
  const std::vector<vertex_t> seed{7};
  constexpr int epochs = 20000;
  std::vector<double> observed(60, 0), expected(60, 0);
  bulk_sampler sampler(g.view(), sampler_options{.kind = "fastgcn", .fanouts = {1}, .seed = 3});
  for (int epoch = 0; epoch < epochs; ++epoch) {
    const epoch_plan plan(seed, 1, 3, static_cast<std::uint32_t>(epoch));
    const auto bulk = sampler.sample(plan, 0, 1);
    const auto src = bulk.layers[0].sources.segment(0);
    observed[src.size() == 1 ? 7 : src[1]] += 1;
  }
  for (const auto& [v, q] : p) expected[v] = q * epochs;
  const auto test = chi_square(observed, expected);
  EXPECT_LT(test.statistic, test.critical);
}

}  // namespace
}  // namespace bulkgnn::sampler
