#include "bulkgnn/distributed/cost_model.hpp"

#include <gtest/gtest.h>

#include <cmath>

namespace bulkgnn::distributed::cost {
namespace {

workload small_workload() {
  return {
      .batch_size = 64, .fanouts = {5, 3}, .bulk = 2, .features = 16, .hidden = 8, .classes = 4};
}

TEST(CostModel, ReplicatedSamplingSendsNothing) {
  const auto g = synthetic_stats(10000, 100000, 10000);
  for (const int p : {1, 2, 4, 16})
    EXPECT_EQ(sampling_bytes(g, small_workload(), grid::replicated, p, 1), 0.0);
  // 1.5D with every rank holding the whole graph is replicated too.
  EXPECT_EQ(sampling_bytes(g, small_workload(), grid::one_and_half_d, 4, 4), 0.0);
  EXPECT_GT(sampling_bytes(g, small_workload(), grid::one_and_half_d, 4, 1), 0.0);
}

TEST(CostModel, FeatureVolumeFallsWithReplication) {
  const auto g = synthetic_stats(10000, 100000, 10000);
  const auto w = small_workload();
  const double c1 = feature_bytes(g, w, 16, 1), c2 = feature_bytes(g, w, 16, 2),
               c4 = feature_bytes(g, w, 16, 4), c16 = feature_bytes(g, w, 16, 16);
  EXPECT_GT(c1, c2);
  EXPECT_GT(c2, c4);
  EXPECT_EQ(c16, 0.0);
  EXPECT_TRUE(std::isnan(feature_bytes(g, w, 16, 3)));
}

TEST(CostModel, TwoDPerRankVolumeFallsAsOneOverRootP) {
  // A graph so large that the broadcasts of A dominate: per rank ≈ 12·nnz/√P
  // per multiply, so quadrupling P halves it (up to the (√P-1)/√P factor).
  auto g = synthetic_stats(1 << 20, 1 << 26, 1 << 20);
  auto w = small_workload();
  w.max_minibatches = 1;
  const auto per_rank = [&](int p) { return sampling_bytes(g, w, grid::two_d, p, 1) / p; };
  const double p16 = per_rank(16), p64 = per_rank(64), p256 = per_rank(256);
  // (√P-1)/P: 3/16, 7/64, 15/256.
  EXPECT_NEAR(p64 / p16, (7.0 / 64) / (3.0 / 16), 0.02);
  EXPECT_NEAR(p256 / p64, (15.0 / 256) / (7.0 / 64), 0.02);
  EXPECT_TRUE(std::isnan(sampling_bytes(g, w, grid::two_d, 8, 1)));
}

TEST(CostModel, GradientsAreRingAllReducesOfTheParameters) {
  const auto g = synthetic_stats(1000, 5000, 640);
  const auto w = small_workload();
  // SAGE 16 -> 8 -> 4: 2·16·8 + 8 + 2·8·4 + 4 = 332 parameters, 1328 B.
  EXPECT_EQ(sage_parameters(w), 332);
  EXPECT_EQ(minibatches_per_epoch(g, w), 10);
  // P = 4: per step 2·3·1328/4 = 1992 B per rank; metrics 2·3·24/4 = 36 B.
  EXPECT_DOUBLE_EQ(gradient_bytes(g, w, 4), 4 * (10 * 1992.0 + 36));
  EXPECT_EQ(gradient_bytes(g, w, 1), 0.0);
}

TEST(CostModel, HandComputedOccupancy) {
  // Two vertices of degree 1 pointing at each other (nnz 2), one seed. The
  // seed draws its one neighbour: 1 draw. Each vertex is in the hop-1
  // frontier with probability 1 - (1 - 1/2)·(1 - 1/2)^1 = 3/4 (seed chance
  // 1/2, one draw hitting it 1/2), so the frontier is 1.5 vertices.
  graph_stats g{.nodes = 2,
                .edges = 2,
                .train = 2,
                .groups = {{.in_degree = 1, .out_degree = 1, .train = true, .count = 2}}};
  workload w{.batch_size = 1, .fanouts = {1}};
  const auto f = expected_frontiers(g, w, 1, 1);
  ASSERT_EQ(f.frontier.size(), 2u);
  EXPECT_DOUBLE_EQ(f.frontier[0], 1.0);
  EXPECT_DOUBLE_EQ(f.draws[0], 1.0);
  EXPECT_DOUBLE_EQ(f.frontier[1], 1.5);
  EXPECT_DOUBLE_EQ(f.row_entries[1], 1.5);
}

TEST(CostModel, SyntheticStatsMatchTheMoments) {
  const auto g = synthetic_stats(100000, 1600000, 50000, 2 * 16.0 * 16.0);
  double n = 0, m1 = 0, train = 0;
  for (const auto& grp : g.groups) {
    n += grp.count;
    m1 += grp.count * grp.out_degree;
    train += grp.train ? grp.count : 0;
  }
  EXPECT_NEAR(n, 100000, 1e-6);
  EXPECT_NEAR(m1, 1600000, 1e-3);
  EXPECT_NEAR(train, 50000, 1e-6);
}

}  // namespace
}  // namespace bulkgnn::distributed::cost
