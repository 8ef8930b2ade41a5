#include "bulkgnn/distributed/cost_model.hpp"

#include "bulkgnn/core/error.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

namespace bulkgnn::distributed::cost {
namespace {

workload small_workload() {
  return {
      .batch_size = 64, .fanouts = {5, 3}, .bulk = 2, .features = 16, .hidden = 8, .classes = 4};
}

TEST(CostModel, ReplicatedSamplingSendsNothing) {
  const auto g = synthetic_stats(10000, 100000, 10000);
  for (const int p : {1, 2, 4, 16})
    EXPECT_EQ(sampling_bytes(g, small_workload(), grid_kind::replicated, p, 1), 0.0);
  // 1.5D with every rank holding the whole graph is replicated too.
  EXPECT_EQ(sampling_bytes(g, small_workload(), grid_kind::one_and_half_d, 4, 4), 0.0);
  EXPECT_GT(sampling_bytes(g, small_workload(), grid_kind::one_and_half_d, 4, 1), 0.0);
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

TEST(CostModel, TwoDSummaBroadcastsAllOfAInEveryFetch) {
  // A graph so large that SUMMA's broadcasts of A dominate: every fetch (one
  // per hop per step) sends each of A's blocks to the √P - 1 other ranks of
  // its process column, 16 B per entry and per non-empty block column.
  const auto g = synthetic_stats(1 << 20, 1 << 26, 1 << 20);
  auto w = small_workload();
  w.max_minibatches = 1;  // one step, two hops: two fetches
  for (const int p : {4, 16, 64}) {
    const double q = std::sqrt(p);
    const double broadcasts =
        2 * (q - 1) * (16.0 * (1 << 26) + 16 * block_columns(g, static_cast<int>(q)) + 8 * p);
    const double total = sampling_bytes(g, w, grid_kind::two_d_summa, p, 1);
    EXPECT_GT(total, broadcasts);
    EXPECT_LT(total, 1.01 * broadcasts);
  }
  // Twice the steps (half the bulk), twice the broadcasts.
  w.max_minibatches = 8;
  w.bulk = 2;
  const double bulk2 = sampling_bytes(g, w, grid_kind::two_d_summa, 4, 1);
  w.bulk = 1;
  EXPECT_NEAR(sampling_bytes(g, w, grid_kind::two_d_summa, 4, 1) / bulk2, 2.0, 0.02);
  EXPECT_TRUE(std::isnan(sampling_bytes(g, w, grid_kind::two_d_summa, 8, 1)));
  EXPECT_TRUE(std::isnan(sampling_bytes(g, w, grid_kind::two_d_summa, 4, 2)));
}

TEST(CostModel, TwoDIsTheLayeredGridWithOneLayerAndMovesNoBlockOfA) {
  const auto g = synthetic_stats(1 << 20, 1 << 26, 1 << 20);
  auto w = small_workload();
  w.max_minibatches = 8;
  for (const bool at_owner : {true, false}) {
    w.draw_at_owner = at_owner;
    for (const int p : {4, 16}) {
      EXPECT_EQ(sampling_bytes(g, w, grid_kind::two_d, p, 1),
                sampling_bytes(g, w, grid_kind::three_d, p, 1));
      EXPECT_LT(sampling_bytes(g, w, grid_kind::two_d, p, 1),
                sampling_bytes(g, w, grid_kind::two_d_summa, p, 1) / 10);
    }
  }
  EXPECT_TRUE(std::isnan(sampling_bytes(g, w, grid_kind::two_d, 8, 1)));
  EXPECT_TRUE(std::isnan(sampling_bytes(g, w, grid_kind::two_d, 4, 2)));
}

TEST(CostModel, TwoDFetchBytesAsSharded2dCountsThem) {
  // P = 4 (q = 2): D = 100 requests, E = 1000 entries, C_S = 80 distinct
  // per process row summed, A with nnz 10000 in n_c 3000 block columns.
  const fetch_load x{.distinct = 100, .entries = 1000, .selection_columns = 80};
  // Non-empty S blocks: 4·(1 - (1/2)^40) for 40 distinct per process row.
  const double s_blocks = 4 * (1 - std::pow(0.5, 40));
  const double requests = 8 * 4 * 3 + 4 * 4 * 1 + 8 * 100 * 0.5 + 8 * 4 * 1;
  const double selection = 8 * (2 * 80 + s_blocks) + 9 * 100;
  const double adjacency = 8 * (2 * 3000 + 4) + 16 * 10000;
  const double sizes = 64 * 4 * 1 + 32 * 2 * 1;
  const double pieces = 4 * 4 * 1 + 4 * 100 * 1 + 8 * 1000 * 0.5;
  EXPECT_DOUBLE_EQ(two_d_fetch_bytes(x, 4, 10000, 3000, false),
                   requests + selection + adjacency + sizes + pieces);
  EXPECT_DOUBLE_EQ(
      two_d_fetch_bytes(x, 4, 10000, 3000, true) - two_d_fetch_bytes(x, 4, 10000, 3000, false),
      4 * 4 * 1 + 4 * 1000 * 0.5);
  EXPECT_EQ(two_d_fetch_bytes(x, 1, 10000, 3000, false), 0.0);
}

TEST(CostModel, ThreeDFetchBytesAsShardedRows3dCountsThem) {
  // P = 8, c = 2: q = 2, fiber F = 4; D = 100, E = 1000.
  const fetch_load x{.distinct = 100, .entries = 1000};
  const double expected =
      8 * 8 * 3 + 8 * 8 * 1 + 100 * (8 * 0.75 + 8 * 1) + 1000 * (8 * 0.5 + 4 * 0.75);
  EXPECT_DOUBLE_EQ(three_d_fetch_bytes(x, 8, 2, false), expected);
  EXPECT_DOUBLE_EQ(three_d_fetch_bytes(x, 8, 2, true) - expected,
                   4 * 8 * 3 + 4 * 8 * 1 + 1000 * (4 * 0.5 + 4 * 0.75));
}

TEST(CostModel, DrawBytesAsShardedRowsCountThem) {
  // R = 300 frontier rows drawing W = 900 entries from D = 100 distinct rows
  // of E = 1000 entries.
  const fetch_load x{.distinct = 100, .entries = 1000, .rows = 300, .drawn = 900};
  // 1.5D, P = 8, c = 2: teams of 4.
  EXPECT_DOUBLE_EQ(one_and_half_d_draw_bytes(x, 8, 2, false),
                   8 * 2 * 4 * 3 + 0.75 * (12 * 300 + 4 * 900));
  EXPECT_DOUBLE_EQ(one_and_half_d_draw_bytes(x, 8, 2, true),
                   8 * 3 * 4 * 3 + 0.75 * (12 * 300 + 8 * 900));
  EXPECT_EQ(one_and_half_d_draw_bytes(x, 4, 4, false), 0.0);
  // 3D, P = 8, c = 2: q = 2, F = 4.
  const double expected =
      8 * 8 * 3 + 8 * 8 * 1 + 12 * 300 * 0.75 + 8 * 100 * 1 + 8 * 1000 * 0.5 + 4 * 900 * 0.75;
  EXPECT_DOUBLE_EQ(three_d_draw_bytes(x, 8, 2, false), expected);
  EXPECT_DOUBLE_EQ(three_d_draw_bytes(x, 8, 2, true) - expected,
                   4 * 8 * 3 + 4 * 8 * 1 + 4 * 1000 * 0.5 + 4 * 900 * 0.75);
}

TEST(CostModel, DrawsAtTheOwnerMoveBytesThatGrowWithTheFanoutNotTheDegree) {
  auto w = small_workload();
  w.max_minibatches = 4;
  const auto sparse = synthetic_stats(100000, 2000000, 100000);  // mean degree 20
  const auto dense = synthetic_stats(100000, 8000000, 100000);   // mean degree 80
  const double at_owner_sparse = sampling_bytes(sparse, w, grid_kind::one_and_half_d, 4, 1);
  const double at_owner_dense = sampling_bytes(dense, w, grid_kind::one_and_half_d, 4, 1);
  EXPECT_NEAR(at_owner_dense / at_owner_sparse, 1.0, 0.1);
  w.draw_at_owner = false;
  const double whole_sparse = sampling_bytes(sparse, w, grid_kind::one_and_half_d, 4, 1);
  const double whole_dense = sampling_bytes(dense, w, grid_kind::one_and_half_d, 4, 1);
  EXPECT_GT(whole_dense / whole_sparse, 3.0);
  EXPECT_LT(at_owner_dense, whole_dense / 5);
  // Every hop taking whole rows: both fetch the same.
  w.fanouts = {-1, -1};
  const double fetched = sampling_bytes(sparse, w, grid_kind::three_d, 8, 2);
  w.draw_at_owner = true;
  EXPECT_EQ(sampling_bytes(sparse, w, grid_kind::three_d, 8, 2), fetched);
}

TEST(CostModel, AFeatureCacheCutsFeatureBytesUntilItHoldsEveryRemoteRow) {
  const auto g = synthetic_stats(100000, 2000000, 100000);
  auto w = small_workload();
  w.max_minibatches = 16;
  const double none = feature_bytes(g, w, 4, 1);
  double previous = none;
  for (const std::int64_t rows : {1000, 5000, 20000}) {
    w.feature_cache_rows = rows;
    const double cached = feature_bytes(g, w, 4, 1);
    EXPECT_LT(cached, previous) << rows;
    previous = cached;
  }
  // Every remote vertex cached: only the all-to-alls' counts remain.
  w.feature_cache_rows = 100000;
  EXPECT_NEAR(feature_bytes(g, w, 4, 1), 16.0 * 4 * 2 * 4 * 3, 1e-6 * none);
  // The hottest rows first: 5% of the vertices save more than 5% of the bytes.
  w.feature_cache_rows = 5000;
  EXPECT_LT(feature_bytes(g, w, 4, 1), 0.95 * none);
}

TEST(CostModel, LayerWiseHopBytesAsTheSplitSamplerCountsThem) {
  const layer_wise_load x{.frontier_rows = 1000,
                          .entries = 20000,
                          .sources = 3000,
                          .block_entries = 1500,
                          .candidates = 4096};
  const double p = 4, k = 2;
  // The draw on every grid: sizes of the weight rows and of the candidates,
  // 32 bytes per candidate, the ring all-reduce of 1/p.
  const double draw =
      8 * k * p * (p - 1) + 8 * p * (p - 1) + 32 * 4096 * (p - 1) + 8 * (p - 1) * 3000;
  const layer_wise_path whole_rows{}, cut{.cut_at_owners = true, .blocks_gathered = true};
  EXPECT_DOUBLE_EQ(layer_wise_hop_bytes(x, grid_kind::replicated, 4, 1, whole_rows, k), draw);
  // 1.5D, a team of 4: ranges and (count, degree) per row, one copy of the
  // entries, and the block entries gathered by every rank.
  EXPECT_DOUBLE_EQ(layer_wise_hop_bytes(x, grid_kind::one_and_half_d, 4, 1, cut, k),
                   draw + 16 * p * 3 + 0.75 * (12 * p * 1000 + 4 * 20000) + 8 * p * (p - 1) +
                       8 * (p - 1) * 1500);
  // Whole rows to every rank: the fetch of P copies of the rows.
  EXPECT_DOUBLE_EQ(
      layer_wise_hop_bytes(x, grid_kind::one_and_half_d, 4, 1, whole_rows, k),
      draw + one_and_half_d_fetch_bytes({.distinct = p * 1000, .entries = p * 20000}, 4, 1, false));
  // A 1.5D team of one holds every row: LADIES moves what replicated moves.
  auto w = small_workload();
  w.sampler = sampler_family::ladies;
  const auto g = synthetic_stats(20000, 400000, 20000);
  EXPECT_DOUBLE_EQ(sampling_bytes(g, w, grid_kind::one_and_half_d, 4, 4),
                   sampling_bytes(g, w, grid_kind::replicated, 4, 1));
  // Cutting rows at the owners moves less than every rank fetching them
  // whole, and more than replicated.
  const double cut_bytes = sampling_bytes(g, w, grid_kind::one_and_half_d, 8, 1);
  w.draw_at_owner = false;
  EXPECT_LT(cut_bytes, sampling_bytes(g, w, grid_kind::one_and_half_d, 8, 1));
  EXPECT_GT(cut_bytes, sampling_bytes(g, w, grid_kind::replicated, 8, 1));
  EXPECT_TRUE(std::isnan(sampling_bytes(g, w, grid_kind::two_d_summa, 4, 1)));
  // Features of layer-wise samplers are not modelled; the prediction still is.
  const auto pred = predict(g, w, grid_kind::one_and_half_d, 8, 1);
  EXPECT_TRUE(pred.valid);
  EXPECT_TRUE(std::isnan(pred.features));
}

TEST(CostModel, LayerWiseFrontiersGrowByWhatTheDrawAdds) {
  auto w = small_workload();
  w.fanouts = {50, 50};
  const auto g = synthetic_stats(100000, 1000000, 100000);
  for (const auto sampler : {sampler_family::ladies, sampler_family::fastgcn}) {
    w.sampler = sampler;
    const auto one = expected_layer_wise_hops(g, w, 1, 1);
    ASSERT_EQ(one.size(), 2u);
    EXPECT_NEAR(one[0].frontier_rows, 64, 1e-9);  // the seeds
    // Sources are the frontier plus at most the fanout's new vertices.
    EXPECT_GT(one[1].frontier_rows, one[0].frontier_rows);
    EXPECT_LE(one[1].frontier_rows, one[0].frontier_rows + 50 + 1e-6);
    EXPECT_NEAR(one[0].sources, one[1].frontier_rows, 1e-6);
    // Minibatches of a step share few vertices on a large graph.
    const auto four = expected_layer_wise_hops(g, w, 4, 1);
    EXPECT_NEAR(four[0].frontier_rows, 4 * 64, 1e-6);
    EXPECT_GT(four[1].frontier_rows, 3.9 * one[1].frontier_rows);
  }
}

TEST(CostModel, TimeIsBytesOverBandwidthPlusLatencyPerMessage) {
  const auto g = synthetic_stats(100000, 2000000, 100000);
  auto w = small_workload();
  w.max_minibatches = 16;
  const auto p = predict(g, w, grid_kind::one_and_half_d, 4, 1, 1);
  const network net{.bandwidth = 1e9, .latency = 1e-5};
  // 16 minibatches in steps of 2 (every rank samples its slice of each): 8
  // steps, 2 hops, 2 all-to-alls over 3 others, each sending counts, then data.
  EXPECT_EQ(p.sampling_messages, 8 * 2 * 2 * 2 * 3);
  EXPECT_EQ(p.features_messages, 16 * 2 * 2 * 3);
  EXPECT_EQ(p.gradients_messages, 17 * 2 * 3);
  EXPECT_DOUBLE_EQ(p.total_seconds(net),
                   (p.sampling + p.features + p.gradients) / 4 / 1e9 +
                       (p.sampling_messages + p.features_messages + p.gradients_messages) * 1e-5);
}

TEST(CostModel, ThreeDWithOneByOneLayersIsOneAndHalfD) {
  // c = P layers of 1×1: the fiber is every rank, nothing crosses a process
  // row, so the 3D fetch is 1.5D's with one team of P.
  const auto g = synthetic_stats(10000, 100000, 10000);
  auto w = small_workload();
  for (const bool weighted : {false, true}) {
    w.weighted = weighted;
    for (const int p : {2, 4, 8})
      EXPECT_NEAR(sampling_bytes(g, w, grid_kind::three_d, p, p),
                  sampling_bytes(g, w, grid_kind::one_and_half_d, p, 1),
                  1e-9 * sampling_bytes(g, w, grid_kind::one_and_half_d, p, 1));
  }
  // ... and a 2×2 layer moves rows within process rows too: more than a
  // team of 4 with its own copies of every row (1.5D c = 1, P = 4).
  w.weighted = false;
  EXPECT_GT(sampling_bytes(g, w, grid_kind::three_d, 4, 1),
            sampling_bytes(g, w, grid_kind::one_and_half_d, 4, 1));
}

TEST(CostModel, BlockColumnsCountsNonEmptyColumnsPerRowBlock) {
  graph_stats g{.nodes = 30,
                .edges = 20,
                .train = 30,
                .groups = {{.in_degree = 2, .out_degree = 1, .train = true, .count = 10},
                           {.in_degree = 0, .out_degree = 0, .train = true, .count = 20}}};
  EXPECT_DOUBLE_EQ(block_columns(g, 1), 10);
  // Two entries per column, each in either of 2 row blocks: a column is in
  // 2·(1 - 1/4) = 1.5 blocks on average.
  EXPECT_DOUBLE_EQ(block_columns(g, 2), 15);
}

TEST(CostModel, GradientsAreRingAllReducesOfTheParameters) {
  const auto g = synthetic_stats(1000, 5000, 640);
  const auto w = small_workload();
  // SAGE 16 -> 8 -> 4: 2·16·8 + 8 + 2·8·4 + 4 = 332 parameters, 1328 B.
  EXPECT_EQ(model_parameters(w), 332);
  EXPECT_EQ(minibatches_per_epoch(g, w), 10);
  // P = 4: per step 2·3·1328/4 = 1992 B per rank; metrics 2·3·24/4 = 36 B.
  EXPECT_DOUBLE_EQ(gradient_bytes(g, w, 4), 4 * (10 * 1992.0 + 36));
  EXPECT_EQ(gradient_bytes(g, w, 1), 0.0);
}

TEST(CostModel, ParametersFollowTheLayerKind) {
  auto w = small_workload();
  // GCN 16 -> 8 -> 4 (no root weight): 16·8 + 8 + 8·4 + 4 = 172.
  w.root_weight = false;
  EXPECT_EQ(model_parameters(w), 172);
  // Three layers on two fanouts (an any-depth sampler): 16 -> 8 -> 8 -> 4.
  w.layers = 3;
  EXPECT_EQ(model_parameters(w), 172 + 8 * 8 + 8);
  w.parameters = 5;
  EXPECT_EQ(model_parameters(w), 5);
}

TEST(CostModel, MinibatchVerticesGrowByTheFanoutsUpToTheGraph) {
  workload w{.batch_size = 2, .fanouts = {3, 2}};
  using sizes = std::vector<double>;
  EXPECT_EQ(minibatch_vertex_bound(w, 1000), (sizes{2, 8, 24}));
  EXPECT_EQ(minibatch_vertex_bound(w, 10), (sizes{2, 8, 10}));
  w.fanouts = {3, -1};
  EXPECT_EQ(minibatch_vertex_bound(w, 1000), (sizes{2, 8, 1000}));
  w.fanouts = {3, 2};
  w.fanout_per_destination = false;  // layer-wise: fanout vertices per hop
  EXPECT_EQ(minibatch_vertex_bound(w, 1000), (sizes{2, 5, 7}));
  w.fanout_per_destination = true;
  w.any_depth = true;  // every layer but the seeds' on all the hops reached
  w.layers = 4;
  EXPECT_EQ(minibatch_vertex_bound(w, 1000), (sizes{2, 24, 24, 24, 24}));
  w.layers = 1;
  EXPECT_EQ(minibatch_vertex_bound(w, 1000), (sizes{2, 24}));
}

TEST(CostModel, HandComputedTrainingMemory) {
  // SAGE 4 -> 8 -> 3 over 2 seeds with fanouts 3,2: vertices 2, 8, 24.
  const workload w{.batch_size = 2, .fanouts = {3, 2}, .features = 4, .hidden = 8, .classes = 3};
  const auto m = training_memory_of(w, 1000, false);
  // (2·4·8 + 8) + (2·8·3 + 3) = 123 parameters, 4 floats each.
  EXPECT_DOUBLE_EQ(m.model, 16.0 * 123);
  // Layer 0 outputs hop 1's 8 vertices: 4 B·8·(2·4 + 3·8); layer 1 the 2
  // seeds: 4 B·2·(2·8 + 3·3).
  EXPECT_DOUBLE_EQ(m.minibatch, 4.0 * 8 * 32 + 4.0 * 2 * 25);
  EXPECT_EQ(m.evaluation, 0.0);
  // Full-graph evaluation: the widest layer over all 1000 vertices.
  EXPECT_DOUBLE_EQ(training_memory_of(w, 1000, true).evaluation, 4.0 * 1000 * 32);
  EXPECT_DOUBLE_EQ(training_memory_of(w, 1000, true).total(),
                   m.model + m.minibatch + 4.0 * 1000 * 32);
}

TEST(CostModel, TrainingMemoryRefusesLayersThatAreNotTheHops) {
  workload w{.batch_size = 2, .fanouts = {3, 2}, .layers = 3};
  EXPECT_THROW((void)training_memory_of(w, 100, false), option_error);
  w.any_depth = true;
  EXPECT_NO_THROW((void)training_memory_of(w, 100, false));
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
