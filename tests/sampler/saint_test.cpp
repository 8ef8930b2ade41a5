// GraphSAINT (sampler/saint/): each draw takes vertices with the
// probabilities its definition gives (node ∝ degree, edge ∝ 1/deg(v) +
// 1/deg(u), walks from uniform roots), tested with stated power; the
// presampled counts are the counts of the presampled subgraphs, and they
// estimate the inclusion probabilities; the normalised aggregation and loss
// are unbiased where the plain ones are not; the sampler's blocks are the
// induced subgraph with those weights; and everything is the same for any
// thread count, bulk size and back end.
#include "bulkgnn/core/error.hpp"
#include "bulkgnn/core/parallel.hpp"
#include "bulkgnn/sampler/bulk_sampler.hpp"
#include "bulkgnn/sampler/saint_subgraphs.hpp"

#include "../support/statistics.hpp"
#include "plan_digests.hpp"
#include "split_test_support.hpp"
#include "test_graphs.hpp"

#include <gtest/gtest.h>

#include "scratch_dir.hpp"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

namespace bulkgnn::sampler {
namespace {

using bulkgnn::testing::count_test_family;
using bulkgnn::testing::required_power;

// random_graph with every edge both ways: GraphSAINT's graphs are undirected.
csr_matrix undirected_graph(vertex_t n, std::uint32_t seed, int max_degree = 20) {
  const auto g = bulkgnn::testing::random_graph(n, seed, max_degree);
  std::vector<std::set<vertex_t>> rows(static_cast<std::size_t>(n));
  for (vertex_t v = 0; v < n; ++v)
    for (const vertex_t u : g.view().row(v)) {
      rows[v].insert(u);
      rows[u].insert(v);
    }
  csr_matrix out;
  out.rows = out.cols = n;
  for (const auto& row : rows) {
    out.indices.insert(out.indices.end(), row.begin(), row.end());
    out.indptr.push_back(static_cast<edge_t>(out.indices.size()));
  }
  return out;
}

double degree(csr_view g, vertex_t v) { return static_cast<double>(g.degree(v)); }

// How often each cell was drawn in `trials` subgraphs of epoch 3.
template <class CellsOf>
std::map<std::vector<vertex_t>, double> drawn_cells(const saint_subgraphs& saint,
                                                    std::int64_t trials, CellsOf cells_of) {
  std::map<std::vector<vertex_t>, double> counts;
  for (std::int64_t i = 0; i < trials; ++i)
    for (const auto& cell : cells_of(saint.draw(3, i))) ++counts[cell];
  return counts;
}

// Tests every cell of `probabilities` against its count, after asserting
// that the family detects a relative bias of `bias` in any one cell.
void expect_drawn_as_defined(const std::map<std::vector<vertex_t>, double>& probabilities,
                             const std::map<std::vector<vertex_t>, double>& counts, double trials,
                             double bias) {
  std::vector<double> p, observed;
  for (const auto& [cell, probability] : probabilities) {
    p.push_back(probability);
    const auto found = counts.find(cell);
    observed.push_back(found == counts.end() ? 0.0 : found->second);
  }
  for (const auto& [cell, count] : counts)
    EXPECT_TRUE(probabilities.contains(cell)) << "drawn a cell of probability 0";
  const count_test_family family{.cells = p.size()};
  ASSERT_GE(family.least_power(trials, p, bias), required_power);
  const auto verdict = family.test(observed, p, trials);
  EXPECT_FALSE(verdict.rejected) << "cell " << verdict.worst
                                 << " is off by z = " << verdict.worst_z;
}

saint_subgraphs make_saint(csr_view g, saint_draw draw, std::int64_t budget,
                           std::int64_t coverage = 1, std::int64_t walk_length = 1) {
  return saint_subgraphs(g, {.draw = draw,
                             .budget = budget,
                             .walk_length = walk_length,
                             .coverage = coverage,
                             .seed = 7});
}

// Node draws: with a budget of b draws ∝ degree, vertex v is in a subgraph
// with probability 1 - (1 - d_v / nnz)^b.
TEST(SaintDraws, NodeDrawsTakeEachVertexWithItsDegreeShare) {
  const auto g = undirected_graph(80, 3);
  const auto saint = make_saint(g.view(), saint_draw::node, 4);
  const double trials = 300000;
  const double edges = static_cast<double>(g.nnz());
  std::map<std::vector<vertex_t>, double> p;
  for (vertex_t v = 0; v < g.rows; ++v)
    if (g.view().degree(v) > 0) p[{v}] = 1 - std::pow(1 - degree(g.view(), v) / edges, 4.0);
  const auto counts = drawn_cells(saint, static_cast<std::int64_t>(trials), [](const auto& vs) {
    std::vector<std::vector<vertex_t>> cells;
    for (const vertex_t v : vs) cells.push_back({v});
    return cells;
  });
  expect_drawn_as_defined(p, counts, trials, 0.15);
}

// Edge draws: with a budget of one edge, the subgraph is its two ends, the
// pair {a, b} drawn with probability (w(a, b) + w(b, a)) / Σw, w(v, u) =
// 1/deg(v) + 1/deg(u) for each stored entry.
TEST(SaintDraws, EdgeDrawsTakeEachEdgeWithItsInverseDegreeWeight) {
  const auto g = undirected_graph(40, 5, 12);
  const auto saint = make_saint(g.view(), saint_draw::edge, 1);
  double total = 0;
  std::map<std::vector<vertex_t>, double> p;
  for (vertex_t v = 0; v < g.rows; ++v)
    for (const vertex_t u : g.view().row(v)) {
      const double w = 1 / degree(g.view(), v) + 1 / degree(g.view(), u);
      p[{std::min(v, u), std::max(v, u)}] += w;
      total += w;
    }
  for (auto& [cell, w] : p) w /= total;
  const double trials = 350000;
  const auto counts = drawn_cells(saint, static_cast<std::int64_t>(trials), [](const auto& vs) {
    return std::vector<std::vector<vertex_t>>{vs};
  });
  expect_drawn_as_defined(p, counts, trials, 0.25);
}

// Walks of one step from one uniform root: the pair {a, b} with probability
// (1/deg(a) + 1/deg(b)) / N, an isolated vertex alone with 1/N.
TEST(SaintDraws, WalksStartAtUniformRootsAndStepToUniformNeighbours) {
  const auto g = undirected_graph(30, 11, 8);
  const auto saint = make_saint(g.view(), saint_draw::random_walk, 1);
  const double n = static_cast<double>(g.rows);
  std::map<std::vector<vertex_t>, double> p;
  for (vertex_t v = 0; v < g.rows; ++v) {
    if (g.view().degree(v) == 0) p[{v}] = 1 / n;
    for (const vertex_t u : g.view().row(v))
      p[{std::min(v, u), std::max(v, u)}] += 1 / (n * degree(g.view(), v));
  }
  const double trials = 300000;
  const auto counts = drawn_cells(saint, static_cast<std::int64_t>(trials), [](const auto& vs) {
    return std::vector<std::vector<vertex_t>>{vs};
  });
  expect_drawn_as_defined(p, counts, trials, 0.25);
}

// The presampled subgraphs are draws of their own streams (apart from every
// epoch's), taken until they hold coverage · N vertices; the counts are
// theirs exactly, and no epoch draws them.
TEST(SaintNormalisation, CountsAreThoseOfThePresampledSubgraphs) {
  const auto g = undirected_graph(60, 2);
  for (const auto draw : {saint_draw::node, saint_draw::edge, saint_draw::random_walk}) {
    const auto saint = make_saint(g.view(), draw, 5, 30, 2);
    std::vector<std::int64_t> vertex_count(60);
    std::map<std::pair<vertex_t, vertex_t>, std::int64_t> edge_count;
    double held = 0;
    for (std::int64_t i = 0; i < saint.presampled(); ++i) {
      const auto vs = saint.draw_presampled(i);
      EXPECT_LT(held, 30.0 * 60) << "subgraph " << i << " was one too many";
      held += static_cast<double>(vs.size());
      const std::set<vertex_t> in(vs.begin(), vs.end());
      for (const vertex_t v : vs) {
        ++vertex_count[v];
        for (const vertex_t u : g.view().row(v))
          if (in.contains(u)) ++edge_count[{v, u}];
      }
    }
    EXPECT_GE(held, 30.0 * 60);
    for (const std::uint32_t epoch : {0u, 0xFFFFFFFFu})
      EXPECT_NE(saint.draw(epoch, 0), saint.draw_presampled(0)) << "epoch " << epoch;
    for (vertex_t v = 0; v < 60; ++v) {
      EXPECT_EQ(saint.vertex_count(v), vertex_count[v]) << v;
      for (const vertex_t u : g.view().row(v))
        EXPECT_EQ(saint.edge_count(v, u), (edge_count[{v, u}])) << v << " <- " << u;
    }
  }
}

// With a cache directory the counts are presampled once and kept: a later
// construction reads them (shown by planting another count there), and a
// file cut short is presampled again and kept whole; other settings keep
// another file.
TEST(SaintNormalisation, CountsAreKeptAndReadBack) {
  const bulkgnn::testing::scratch_dir dir;
  const auto g = undirected_graph(60, 3);
  const saint_settings settings{.draw = saint_draw::random_walk,
                                .budget = 5,
                                .walk_length = 2,
                                .coverage = 20,
                                .seed = 7,
                                .cache_dir = dir / "cache"};
  const saint_subgraphs first(g.view(), settings);
  const auto file = kept_saint_counts_file(g.view(), settings);
  ASSERT_TRUE(std::filesystem::exists(file));
  const auto same_counts = [&](const saint_subgraphs& a, const saint_subgraphs& b) {
    if (a.presampled() != b.presampled()) return false;
    for (vertex_t v = 0; v < 60; ++v) {
      if (a.vertex_count(v) != b.vertex_count(v)) return false;
      for (const vertex_t u : g.view().row(v))
        if (a.edge_count(v, u) != b.edge_count(v, u)) return false;
    }
    return true;
  };
  EXPECT_TRUE(same_counts(saint_subgraphs(g.view(), settings), first));
  EXPECT_TRUE(same_counts(make_saint(g.view(), saint_draw::random_walk, 5, 20, 2), first));

  // Vertex 0's count sits after the header and the presampled count, before
  // the other counts: plant another one there.
  const auto bytes = std::filesystem::file_size(file);
  const auto vertex_counts_at =
      bytes - g.view().nnz() * sizeof(std::uint32_t) - 60 * sizeof(std::int64_t);
  const std::int64_t planted = first.vertex_count(0) == 0 ? 1 : 0;
  {
    std::fstream f(file, std::ios::binary | std::ios::in | std::ios::out);
    f.seekp(static_cast<std::streamoff>(vertex_counts_at));
    f.write(reinterpret_cast<const char*>(&planted), sizeof planted);
  }
  EXPECT_EQ(saint_subgraphs(g.view(), settings).vertex_count(0), planted);

  std::filesystem::resize_file(file, bytes - 4);
  EXPECT_TRUE(same_counts(saint_subgraphs(g.view(), settings), first));
  EXPECT_EQ(std::filesystem::file_size(file), bytes);
  auto other = settings;
  other.coverage = 21;
  EXPECT_NE(kept_saint_counts_file(g.view(), other), file);
  other = settings;
  other.steps = 9;  // steps do not change the presampling
  EXPECT_EQ(kept_saint_counts_file(g.view(), other), file);
}

// The weights from the counts, as the paper (and PyG, with its bounds)
// computes them.
TEST(SaintNormalisation, WeightsAreTheCountRatios) {
  const auto g = undirected_graph(60, 4);
  const auto saint = make_saint(g.view(), saint_draw::random_walk, 3, 20, 2);
  const double m = static_cast<double>(saint.presampled());
  const auto weights = saint.loss_weights();
  ASSERT_EQ(std::ssize(weights), 60);
  for (vertex_t v = 0; v < 60; ++v) {
    const double cv = static_cast<double>(saint.vertex_count(v));
    EXPECT_FLOAT_EQ(weights[v], static_cast<float>(m / (std::max(cv, 0.1) * 60)));
    for (const vertex_t u : g.view().row(v)) {
      const double cvu = static_cast<double>(saint.edge_count(v, u));
      const double ratio = cvu > 0 ? std::min(cv / cvu, 1e4) : cv > 0 ? 1e4 : 0.1;
      EXPECT_FLOAT_EQ(saint.edge_weight(v, u), static_cast<float>(ratio / degree(g.view(), v)));
    }
  }
}

// Node draws of budget b: p_v = 1 - (1 - q_v)^b and both ends of an edge
// p_vu = 1 - (1 - q_v)^b - (1 - q_u)^b + (1 - q_v - q_u)^b, q = d / nnz.
// The presampled counts estimate them: C_v ~ Binomial(M, p_v).
TEST(SaintNormalisation, CountsEstimateTheInclusionProbabilities) {
  const auto g = undirected_graph(50, 6, 12);
  const std::int64_t budget = 10;
  const auto saint = make_saint(g.view(), saint_draw::node, budget, 30000);
  const double b = static_cast<double>(budget);
  const double edges = static_cast<double>(g.nnz());
  std::map<std::vector<vertex_t>, double> p, counts;
  for (vertex_t v = 0; v < g.rows; ++v) {
    const double qv = degree(g.view(), v) / edges;
    if (qv == 0) continue;
    p[{v}] = 1 - std::pow(1 - qv, b);
    counts[{v}] = static_cast<double>(saint.vertex_count(v));
    for (const vertex_t u : g.view().row(v)) {
      const double qu = degree(g.view(), u) / edges;
      p[{v, u}] = 1 - std::pow(1 - qv, b) - std::pow(1 - qu, b) + std::pow(1 - qv - qu, b);
      counts[{v, u}] = static_cast<double>(saint.edge_count(v, u));
    }
  }
  expect_drawn_as_defined(p, counts, static_cast<double>(saint.presampled()), 0.3);
}

// x_u = deg(u) + 1, which degree-biased draws over-represent.
std::vector<double> degree_feature(csr_view g) {
  std::vector<double> x(static_cast<std::size_t>(g.rows));
  for (vertex_t v = 0; v < g.rows; ++v) x[v] = degree(g, v) + 1;
  return x;
}

struct aggregation_errors {
  double normalised = 0;  // mean relative error of Σ_{u ∈ N(v) ∩ S} w_vu x_u
  double plain_sum = 0;   // the same with w_vu = 1/deg(v) (no C_v / C_vu)
  double plain_mean = 0;  // the mean over the sampled neighbours
};

// Over `trials` fresh subgraphs S: for every vertex v with neighbours, the
// three estimates of mean_{u ∈ N(v)} x_u averaged over the subgraphs
// holding v, their relative errors averaged over the vertices.
aggregation_errors aggregation_errors_of(const saint_subgraphs& saint, csr_view g,
                                         std::int64_t trials) {
  const auto x = degree_feature(g);
  std::vector<double> normalised(static_cast<std::size_t>(g.rows)), plain_sum(normalised.size()),
      plain_mean(normalised.size()), held(normalised.size());
  for (std::int64_t i = 0; i < trials; ++i) {
    const auto vs = saint.draw(1, i);
    const std::set<vertex_t> in(vs.begin(), vs.end());
    for (const vertex_t v : vs) {
      double weighted = 0, sum = 0, count = 0;
      for (const vertex_t u : g.row(v))
        if (in.contains(u)) {
          weighted += saint.edge_weight(v, u) * x[u];
          sum += x[u];
          ++count;
        }
      ++held[v];
      normalised[v] += weighted;
      plain_sum[v] += sum / std::max(1.0, degree(g, v));
      if (count > 0) plain_mean[v] += sum / count;
    }
  }
  aggregation_errors errors;
  double vertices = 0;
  for (vertex_t v = 0; v < g.rows; ++v) {
    if (g.degree(v) == 0 || held[v] == 0) continue;
    double truth = 0;
    for (const vertex_t u : g.row(v)) truth += x[u] / degree(g, v);
    errors.normalised += std::abs(normalised[v] / held[v] / truth - 1);
    errors.plain_sum += std::abs(plain_sum[v] / held[v] / truth - 1);
    errors.plain_mean += std::abs(plain_mean[v] / held[v] / truth - 1);
    ++vertices;
  }
  errors.normalised /= vertices;
  errors.plain_sum /= vertices;
  errors.plain_mean /= vertices;
  return errors;
}

// The paper's Proposition: given v in the subgraph, Σ_u Ã_vu / α_uv x_u over
// the subgraph's neighbours is unbiased for Σ_u Ã_vu x_u, α_uv = p_uv / p_v,
// here from the estimated counts. Design: 4000 subgraphs holding about a
// third of the graph, so each vertex's mean rests on about 1300 of them
// (Monte-Carlo error about 1%); the plain sum misses the neighbours left
// out (about two thirds) and the plain mean over-weights the
// high-degree neighbours that degree-biased draws favour, so both are far
// above the 4% bound, which the normalised estimate stays well within.
TEST(SaintNormalisation, NormalisedAggregationIsUnbiasedWherePlainOnesAreNot) {
  const auto g = undirected_graph(120, 8, 30);
  for (const auto draw : {saint_draw::node, saint_draw::edge, saint_draw::random_walk}) {
    const std::int64_t budget = draw == saint_draw::node ? 45 : draw == saint_draw::edge ? 25 : 15;
    const auto saint = make_saint(g.view(), draw, budget, 3000, 2);
    const auto errors = aggregation_errors_of(saint, g.view(), 4000);
    EXPECT_LT(errors.normalised, 0.04) << static_cast<int>(draw);
    EXPECT_GT(errors.plain_sum, 0.3) << static_cast<int>(draw);
    if (draw == saint_draw::node) {
      EXPECT_GT(errors.plain_mean, 0.04);
    }
  }
}

// The loss estimator: E[Σ_{v ∈ S} λ_v y_v] = Σ_v p_v λ_v y_v = Σ_v y_v / N
// with λ_v = M / (C_v N) and C_v / M estimating p_v. Over 4000 subgraphs
// the mean is within 2% (its Monte-Carlo error is below 0.5%); weighing
// every vertex alike (λ = 1 / E|S|) misses by far more, since node draws
// favour the high-degree vertices, whose y_v = deg(v) + 1 is large.
TEST(SaintNormalisation, NormalisedLossIsUnbiasedForTheMeanOverTheGraph) {
  const auto g = undirected_graph(120, 9, 30);
  const auto saint = make_saint(g.view(), saint_draw::node, 45, 3000);
  const auto y = degree_feature(g.view());
  double truth = 0;
  for (const double value : y) truth += value / static_cast<double>(g.rows);
  double normalised = 0, plain = 0, vertices = 0;
  const std::int64_t trials = 4000;
  for (std::int64_t i = 0; i < trials; ++i) {
    const auto vs = saint.draw(2, i);
    double sum = 0;
    for (const vertex_t v : vs) {
      normalised += saint.loss_weights()[v] * y[v];
      sum += y[v];
    }
    plain += sum / static_cast<double>(vs.size());
    vertices += static_cast<double>(vs.size());
  }
  normalised /= static_cast<double>(trials);
  plain /= static_cast<double>(trials);
  EXPECT_NEAR(normalised / truth, 1.0, 0.02);
  EXPECT_GT(std::abs(plain / truth - 1), 0.1);
}

// The brute-force model of minibatch j with the saint weights as values,
// trimmed to what the seeds read.
minibatch on_subgraph(csr_view g, const saint_subgraphs& saint, const epoch_plan& plan,
                      std::int64_t j, std::size_t layers) {
  auto full = bulkgnn::testing::planned_subgraph_model(g, plan, j, layers);
  const auto& vertices = full.input_nodes;
  for (auto& block : full.blocks) {
    block.values = buffer<float>(static_cast<std::size_t>(block.nnz()));
    for (std::int64_t r = 0; r < block.rows; ++r)
      for (edge_t e = block.indptr[r]; e < block.indptr[r + 1]; ++e)
        block.values[e] = saint.edge_weight(vertices[r], vertices[block.indices[e]]);
  }
  return restrict_to_seeds(full, 0, std::ssize(full.seeds));
}

// Every third vertex trains.
std::vector<vertex_t> every_third(vertex_t n) {
  std::vector<vertex_t> train;
  for (vertex_t v = 0; v < n; v += 3) train.push_back(v);
  return train;
}

// `g` with every row's columns in descending order and its first neighbour
// stored twice: rows as a dataset may store them.
csr_matrix unsorted_with_repeats(csr_view g) {
  csr_matrix out;
  out.rows = out.cols = g.rows;
  for (vertex_t v = 0; v < g.rows; ++v) {
    const auto row = g.row(v);
    out.indices.insert(out.indices.end(), row.rbegin(), row.rend());
    if (!row.empty()) out.indices.push_back(row.front());
    out.indptr.push_back(static_cast<edge_t>(out.indices.size()));
  }
  return out;
}

TEST(SaintSampler, IsTheModelOnTheDrawnSubgraphWithItsNormalisedWeights) {
  const auto sorted = undirected_graph(300, 12);
  const auto unsorted = unsorted_with_repeats(sorted.view());
  const auto train = every_third(300);
  for (const auto* graph : {&sorted, &unsorted})
    for (const std::string kind : {"saint-node", "saint-edge", "saint-rw"}) {
      const auto& g = *graph;
      for (const std::size_t layers : {1, 2, 3}) {
        sampler_options o{
            .kind = kind, .fanouts = std::vector<std::int64_t>(layers, -1), .seed = 7};
        const auto batching = std::dynamic_pointer_cast<const saint_subgraphs>(
            find_sampler(kind).subgraph_batching(g.view(), o, 20, executor{}));
        ASSERT_NE(batching, nullptr);
        const epoch_plan plan(train, 20, 7, 4, batching);
        ASSERT_EQ(plan.num_minibatches(), batching->minibatch_count(train, 20));
        for (std::int64_t j = 0; j < plan.num_minibatches(); ++j) {
          const auto drawn = batching->draw(4, j);
          EXPECT_EQ(std::vector<vertex_t>(plan.subgraph(j).begin(), plan.subgraph(j).end()), drawn);
          std::vector<vertex_t> seeds;
          for (const vertex_t v : drawn)
            if (v % 3 == 0) seeds.push_back(v);
          EXPECT_EQ(std::vector<vertex_t>(plan.seeds(j).begin(), plan.seeds(j).end()), seeds)
              << "the training vertices of the subgraph, ascending";
        }
        bulk_sampler sampler(g.view(), o);
        const auto bulk = sampler.sample(plan, 0, plan.num_minibatches());
        for (std::int64_t j = 0; j < bulk.count(); ++j)
          testing::expect_same_minibatch(
              bulk.extract(j), on_subgraph(g.view(), *batching, plan, j, layers),
              kind + " minibatch " + std::to_string(j) + ", " + std::to_string(layers) + " layers");
      }
    }
}

// Epoch sizes: ⌈N / (budget · vertices per draw)⌉ by default, or `steps`.
TEST(SaintSampler, AnEpochTouchesTheGraphAboutOnceOrTakesItsSteps) {
  const auto g = undirected_graph(300, 12);
  const auto train = every_third(300);
  EXPECT_EQ(make_saint(g.view(), saint_draw::node, 40).minibatch_count(train, 40), 8);
  EXPECT_EQ(make_saint(g.view(), saint_draw::edge, 40).minibatch_count(train, 40), 4);
  EXPECT_EQ(make_saint(g.view(), saint_draw::random_walk, 40, 1, 2).minibatch_count(train, 40), 3);
  const saint_subgraphs stepped(g.view(), {.budget = 40, .steps = 11, .coverage = 1});
  EXPECT_EQ(stepped.minibatch_count(train, 40), 11);
}

TEST(SaintSampler, SameMinibatchesAndWeightsForAnyBulkSizeThreadCountAndBackEnd) {
  const auto g = undirected_graph(400, 14);
  const auto train = every_third(400);
  for (const std::string kind : {"saint-node", "saint-edge", "saint-rw"}) {
    const sampler_options o{.kind = kind, .fanouts = {-1, -1}, .seed = 3};
    const auto plan = bulkgnn::testing::plan_for(o, g.view(), train, 30, 2);
    bulkgnn::testing::expect_same_digests_for_any_bulk_threads_and_back_end(g.view(), o, plan);
    // Digests leave values out: the weights themselves, presampled on 1 and on
    // 4 threads, and the blocks holding them.
    const auto on_threads = [&](int threads) {
      const thread_limit limit(threads);
      return saint_subgraphs(g.view(), saint_settings_of(o, 30));
    };
    const auto one = on_threads(1);
    const auto four = on_threads(4);
    EXPECT_TRUE(std::ranges::equal(one.loss_weights(), four.loss_weights())) << kind;
    // An executor's arena of threads (Python's threads=) holds the work too.
    const saint_subgraphs arena(g.view(), saint_settings_of(o, 30), executor(backend::cpu, 3));
    EXPECT_TRUE(std::ranges::equal(one.loss_weights(), arena.loss_weights())) << kind;
    EXPECT_EQ(arena.batch(train, 30, 3, 5).vertices, one.batch(train, 30, 3, 5).vertices) << kind;
    for (vertex_t v = 0; v < g.rows; ++v)
      for (const vertex_t u : g.view().row(v))
        ASSERT_EQ(one.edge_weight(v, u), four.edge_weight(v, u)) << kind;
    bulk_sampler cpu(g.view(), o);
    bulk_sampler reference(g.view(), o, executor{backend::reference});
    const auto a = cpu.sample(plan, 0, plan.num_minibatches());
    const auto b = reference.sample(plan, 0, plan.num_minibatches());
    for (std::int64_t j = 0; j < a.count(); ++j)
      testing::expect_same_minibatch(a.extract(j), b.extract(j), kind + " reference back end");
  }
}

TEST(SaintSampler, RefusesWhatItCannotDo) {
  const auto g = undirected_graph(60, 9);
  sampler_options o{.kind = "saint-rw", .fanouts = {5, -1}, .seed = 1};
  bulkgnn::testing::expect_sampler_refuses(g.view(), o, "give -1 per layer");
  o.fanouts = {-1, -1};
  o.parameters["coverage"] = 0;
  bulkgnn::testing::expect_sampler_refuses(g.view(), o, "coverage");
  o.parameters.clear();
  // Seeds alone say nothing of the subgraph a minibatch runs on.
  bulk_sampler sampler(g.view(), o);
  EXPECT_THROW((void)sampler.sample(epoch_plan(bulkgnn::testing::all_vertices(60), 8, 1, 0), 0, 1),
               option_error);
  // A plan of another sampler's subgraphs carries no weights.
  const auto clusters =
      std::make_shared<const vertex_clusters>(g.view(), std::vector<std::int32_t>(60, 0), 1);
  EXPECT_THROW(
      (void)sampler.sample(epoch_plan(bulkgnn::testing::all_vertices(60), 1, 1, 0, clusters), 0, 1),
      option_error);
  const auto saint = saint_batching(g.view(), o, 10, executor{});
  EXPECT_THROW((void)saint->minibatch_count(bulkgnn::testing::all_vertices(60), 11), option_error)
      << "batch_size is the budget the normalisation was estimated for";
  EXPECT_THROW((void)saint->batch(bulkgnn::testing::all_vertices(60), 10, 2, 0), option_error)
      << "another seed";
  EXPECT_THROW((void)saint_batching(g.view(), o, 0, executor{}), option_error);
  csr_matrix empty;
  empty.rows = empty.cols = 5;
  empty.indptr.assign(6, 0);
  EXPECT_THROW((void)saint_batching(empty.view(), o, 10, executor{}), option_error);
}

}  // namespace
}  // namespace bulkgnn::sampler
