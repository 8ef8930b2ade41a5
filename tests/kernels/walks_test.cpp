#include "bulkgnn/kernels/walks.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <random>
#include <set>
#include <vector>

#include "bulkgnn/core/error.hpp"
#include "bulkgnn/core/parallel.hpp"
#include "test_support.hpp"

namespace bulkgnn::kernels {
namespace {

using testing::cpu_exec;
using testing::reference_exec;

// An undirected graph from its edges, both directions stored, rows sorted.
csr_matrix undirected(std::int64_t n, const std::vector<std::pair<vertex_t, vertex_t>>& edges) {
  std::vector<std::set<vertex_t>> rows(static_cast<std::size_t>(n));
  for (const auto& [u, v] : edges) {
    rows[static_cast<std::size_t>(u)].insert(v);
    rows[static_cast<std::size_t>(v)].insert(u);
  }
  csr_matrix g;
  g.rows = g.cols = n;
  for (const auto& row : rows) {
    for (const auto v : row) g.indices.push_back(v);
    g.indptr.push_back(static_cast<edge_t>(g.indices.size()));
  }
  return g;
}

// Binomial count within 5 standard deviations of its mean.
void expect_binomial(std::int64_t count, std::int64_t trials, double probability,
                     const char* what) {
  const double mean = static_cast<double>(trials) * probability;
  const double sd = std::sqrt(mean * (1 - probability));
  EXPECT_NEAR(static_cast<double>(count), mean, 5 * sd + 1) << what;
}

// From t = 0 to v = 1, v's neighbours are t itself (weight 1/p), 2 (also
// t's neighbour: weight 1) and 3 (not: weight 1/q): the second step's
// frequencies are those weights over their sum.
TEST(Node2vecWalks, SecondStepsFollowTheReturnAndInOutWeights) {
  const auto g = undirected(4, {{0, 1}, {0, 2}, {1, 2}, {1, 3}});
  const std::int64_t walks = 40000;
  const std::vector<vertex_t> starts(static_cast<std::size_t>(walks), 0);
  for (const auto& [p, q] : {std::pair{0.5, 2.0}, {4.0, 0.25}, {1.0, 1.0}}) {
    const auto out = node2vec_walks(cpu_exec, g.view(), starts, {.length = 2, .p = p, .q = q});
    std::map<vertex_t, std::int64_t> second;
    std::int64_t through_1 = 0;
    for (std::int64_t i = 0; i < walks; ++i) {
      const auto* walk = out.data() + i * 3;
      ASSERT_EQ(walk[0], 0);
      if (walk[1] != 1) continue;
      ++through_1;
      ++second[walk[2]];
    }
    expect_binomial(through_1, walks, 0.5, "first step: uniform over 0's two neighbours");
    const double back = 1 / p;
    const double total = back + 1 + 1 / q;
    expect_binomial(second[0], through_1, back / total, "back to t: 1/p");
    expect_binomial(second[2], through_1, 1 / total, "t's neighbour: 1");
    expect_binomial(second[3], through_1, (1 / q) / total, "away from t: 1/q");
  }
}

// Every step is an edge of the graph, and a walk stays at a vertex without
// neighbours, as torch_cluster's does.
TEST(Node2vecWalks, StepsAreEdgesAndDeadEndsRepeatTheirVertex) {
  auto g = undirected(6, {{0, 1}, {1, 2}, {2, 3}, {3, 4}});  // 5 has no neighbour
  const std::vector<vertex_t> starts{0, 2, 4, 5};
  const auto out = node2vec_walks(cpu_exec, g.view(), starts, {.length = 6, .p = 2, .q = 0.5});
  for (std::size_t i = 0; i < starts.size(); ++i) {
    const auto* walk = out.data() + i * 7;
    EXPECT_EQ(walk[0], starts[i]);
    for (int s = 1; s <= 6; ++s) {
      if (starts[i] == 5) {
        EXPECT_EQ(walk[s], 5);
        continue;
      }
      const auto row = g.view().row(walk[s - 1]);
      EXPECT_TRUE(std::find(row.begin(), row.end(), walk[s]) != row.end())
          << "walk " << i << " step " << s;
    }
  }
}

TEST(Node2vecWalks, CpuEqualsTheReferenceForAnyThreadCountAndDependsOnSeedAndEpoch) {
  std::mt19937_64 gen(4);
  std::vector<std::pair<vertex_t, vertex_t>> edges;
  for (int e = 0; e < 6000; ++e)
    edges.emplace_back(static_cast<vertex_t>(gen() % 1000), static_cast<vertex_t>(gen() % 1000));
  const auto g = undirected(1000, edges);
  std::vector<vertex_t> starts(5000);
  for (auto& s : starts) s = static_cast<vertex_t>(gen() % 1000);
  const node2vec_options options{.length = 12, .p = 0.7, .q = 3.0, .seed = 9, .epoch = 2};
  const auto reference = node2vec_walks(reference_exec, g.view(), starts, options);
  for (const int threads : {1, 2}) {
    const thread_limit limit(threads);
    const auto cpu = node2vec_walks(cpu_exec, g.view(), starts, options);
    EXPECT_TRUE(std::equal(cpu.begin(), cpu.end(), reference.begin())) << threads << " threads";
  }
  auto other = options;
  other.epoch = 3;
  const auto next_epoch = node2vec_walks(cpu_exec, g.view(), starts, other);
  EXPECT_FALSE(std::equal(next_epoch.begin(), next_epoch.end(), reference.begin()));
}

TEST(Node2vecWalks, ImpossibleOptionsAreRefusedByName) {
  const auto g = undirected(3, {{0, 1}});
  const std::vector<vertex_t> starts{0};
  for (const auto& [options, field] :
       {std::pair{node2vec_options{.length = 0}, "node2vec_options.length"},
        std::pair{node2vec_options{.p = 0}, "node2vec_options.p"},
        std::pair{node2vec_options{.q = std::nan("")}, "node2vec_options.q"}}) {
    try {
      std::ignore = node2vec_walks(cpu_exec, g.view(), starts, options);
      ADD_FAILURE() << field << " accepted";
    } catch (const option_error& e) {
      EXPECT_NE(std::string(e.what()).find(field), std::string::npos) << e.what();
    }
  }
  const std::vector<vertex_t> out_of_range{3};
  EXPECT_THROW(std::ignore = node2vec_walks(cpu_exec, g.view(), out_of_range, {}), error);
}

}  // namespace
}  // namespace bulkgnn::kernels
