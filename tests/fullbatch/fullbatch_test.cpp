#include "bulkgnn/comm/self_communicator.hpp"
#include "bulkgnn/core/error.hpp"
#include "bulkgnn/fullbatch/closed_forms.hpp"
#include "bulkgnn/fullbatch/compression.hpp"
#include "bulkgnn/fullbatch/full_batch_training.hpp"
#include "bulkgnn/fullbatch/grid.hpp"
#include "bulkgnn/fullbatch/normalised_adjacency.hpp"
#include "bulkgnn/trainer/layers.hpp"
#include "full_batch_support.hpp"
#include "small_csbm.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <map>
#include <set>

namespace bulkgnn::fullbatch {
namespace {

using testing::random_graph;
using testing::whole_normalised;

TEST(GridLayout, RefusesRankCountsTheGridCannotTake) {
  const auto message_of = [](grid_kind kind, int ranks, int c) {
    try {
      grid_layout layout(kind, ranks, c);
    } catch (const option_error& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  EXPECT_NE(message_of(grid_kind::two_d, 2, 1).find("square"), std::string::npos);
  EXPECT_NE(message_of(grid_kind::two_d, 8, 1).find("square"), std::string::npos);
  EXPECT_NE(message_of(grid_kind::one_and_half_d, 4, 3).find("c must divide"), std::string::npos);
  EXPECT_NE(message_of(grid_kind::three_d, 4, 2).find("c·q²"), std::string::npos);
  EXPECT_NE(message_of(grid_kind::one_d, 4, 2).find("layout_options.replication"),
            std::string::npos);
  EXPECT_NE(message_of(grid_kind::two_d, 4, 2).find("use 3d"), std::string::npos);
  EXPECT_NE(message_of(grid_kind::replicated, 4, 1).find("full-batch training runs on 1d"),
            std::string::npos);
  EXPECT_NE(message_of(grid_kind::two_d_summa, 4, 1).find("layout_options.grid 2d-summa"),
            std::string::npos);
  EXPECT_THROW((void)parse_grid_kind("4d", full_batch_grids, "full-batch training"), option_error);
  EXPECT_EQ(message_of(grid_kind::three_d, 8, 2), "");
  EXPECT_EQ(message_of(grid_kind::one_and_half_d, 6, 3), "");
}

// rank_grid's one placement rule: replica k of part i is rank k·(P/c) + i,
// as minibatch sampling places it.
TEST(GridLayout, OneAndAHalfDPlacesReplicasAsEveryGridDoes) {
  const grid_layout layout(grid_kind::one_and_half_d, 6, 2);
  EXPECT_EQ(layout.rank_of_part(1, 1), 4);
  EXPECT_EQ(layout.part_of_rank(4), 1);
  EXPECT_EQ(layout.replica_of_rank(4), 1);
  EXPECT_EQ(layout.rank_of_part(2, 0), 2);
}

TEST(GridLayout, PartsAndRanksAreInverse) {
  for (const auto& [kind, ranks, c] :
       std::vector<std::tuple<grid_kind, int, int>>{{grid_kind::one_d, 4, 1},
                                                    {grid_kind::one_and_half_d, 6, 2},
                                                    {grid_kind::two_d, 9, 1},
                                                    {grid_kind::three_d, 8, 2},
                                                    {grid_kind::three_d, 18, 2}}) {
    const grid_layout layout(kind, ranks, c);
    std::vector<int> seen(static_cast<std::size_t>(layout.parts()), 0);
    for (int r = 0; r < ranks; ++r) ++seen[layout.part_of_rank(r)];
    const int copies = kind == grid_kind::one_and_half_d ? c : 1;
    for (int p = 0; p < layout.parts(); ++p) {
      EXPECT_EQ(seen[p], copies);
      for (int replica = 0; replica < copies; ++replica) {
        const int r = layout.rank_of_part(p, replica);
        EXPECT_EQ(layout.part_of_rank(r), p);
        EXPECT_EQ(layout.replica_of_rank(r), replica);
      }
    }
  }
}

TEST(NormalisedAdjacency, GcnIsTheSymmetricNormalisationWithSelfLoops) {
  const auto graph = random_graph(30, 5, 7);
  const auto a = whole_normalised(graph.view(), trainer::layer_kind::gcn);
  // Dense reference: Ã = A + I where a row lacks its self loop, D̃ its row sums.
  const auto n = static_cast<std::size_t>(graph.rows);
  std::vector<double> dense(n * n, 0.0), degree(n, 0.0);
  for (std::size_t v = 0; v < n; ++v) {
    bool self = false;
    for (auto e = graph.indptr[v]; e < graph.indptr[v + 1]; ++e) {
      dense[v * n + graph.indices[e]] += 1;
      self = self || graph.indices[e] == static_cast<vertex_t>(v);
    }
    if (!self) dense[v * n + v] += 1;
    for (std::size_t u = 0; u < n; ++u) degree[v] += dense[v * n + u];
  }
  std::vector<double> got(n * n, 0.0);
  for (std::size_t v = 0; v < n; ++v)
    for (auto e = a.indptr[v]; e < a.indptr[v + 1]; ++e) {
      ASSERT_TRUE(e == a.indptr[v] || a.indices[e - 1] <= a.indices[e]) << "row " << v;
      got[v * n + a.indices[e]] += a.values[e];
    }
  for (std::size_t v = 0; v < n; ++v)
    for (std::size_t u = 0; u < n; ++u)
      EXPECT_NEAR(got[v * n + u], dense[v * n + u] / std::sqrt(degree[v] * degree[u]), 1e-6)
          << v << "," << u;
}

TEST(NormalisedAdjacency, SageIsTheModelsMeanBlock) {
  const auto graph = random_graph(30, 5, 8);
  const auto a = whole_normalised(graph.view(), trainer::layer_kind::sage);
  const auto mean = trainer::full_graph_block(executor{}, graph.view(), trainer::layer_kind::sage);
  ASSERT_EQ(a.indices.size(), mean.forward.indices.size());
  for (std::int64_t v = 0; v < graph.rows; ++v) {
    std::map<vertex_t, float> want, got;
    for (auto e = mean.forward.indptr[v]; e < mean.forward.indptr[v + 1]; ++e)
      want[mean.forward.indices[e]] += mean.forward.values[e];
    for (auto e = a.indptr[v]; e < a.indptr[v + 1]; ++e) got[a.indices[e]] += a.values[e];
    ASSERT_EQ(want.size(), got.size()) << "row " << v;
    for (const auto& [u, value] : want) EXPECT_FLOAT_EQ(got[u], value) << v << "," << u;
  }
}

TEST(Compression, QuantisedRowsAreWithinHalfAStep) {
  std::mt19937_64 gen(5);
  std::normal_distribution<float> value(0.0f, 3.0f);
  const std::int64_t cols = 13;
  std::vector<float> rows(7 * cols);
  for (auto& v : rows) v = value(gen);
  for (int i = 0; i < cols; ++i) rows[2 * cols + i] = 1.5f;  // a constant row
  for (const int rate : {2, 4, 8, 16, 32}) {
    const quantising_codec codec(rate, cols);
    const auto encoded =
        codec.encode(std::as_bytes(std::span(rows)), comm::element_info_of<float>());
    EXPECT_EQ(static_cast<std::int64_t>(encoded.size()), 7 * codec.row_bytes());
    EXPECT_EQ(codec.row_bytes(), 8 + (cols * (32 / rate) + 7) / 8);
    const auto raw = codec.decode(encoded, comm::element_info_of<float>());
    ASSERT_EQ(raw.size(), rows.size() * sizeof(float));
    std::vector<float> decoded(rows.size());
    std::memcpy(decoded.data(), raw.data(), raw.size());
    for (std::int64_t r = 0; r < 7; ++r) {
      const auto row = std::span(rows).subspan(r * cols, cols);
      const auto [low, high] = std::minmax_element(row.begin(), row.end());
      const double step = (*high - *low) / ((1 << (32 / rate)) - 1);
      for (std::int64_t c = 0; c < cols; ++c)
        EXPECT_LE(std::abs(decoded[r * cols + c] - row[c]), step / 2 + 1e-5 * std::abs(row[c]))
            << "rate " << rate << " row " << r;
    }
  }
}

TEST(Compression, RefusesNonFiniteRows) {
  const std::vector<float> rows{1.0f, std::nanf(""), 2.0f, 3.0f};
  const quantising_codec codec(4, 2);
  EXPECT_THROW((void)codec.encode(std::as_bytes(std::span(rows)), comm::element_info_of<float>()),
               error);
}

TEST(Compression, SchedulesReachFullPrecision) {
  EXPECT_FALSE(compression_schedule("none").compresses());
  EXPECT_EQ(compression_schedule("none").rate_at(5), 1);
  EXPECT_EQ(compression_schedule("fixed:8").rate_at(0), 8);
  EXPECT_EQ(compression_schedule("fixed:8").rate_at(1000), 8);
  EXPECT_FALSE(compression_schedule("fixed:1").compresses());
  const compression_schedule variable("variable:16:50");
  std::vector<int> rates;
  for (int e = 0; e < 60; ++e) rates.push_back(variable.rate_at(e));
  EXPECT_EQ(rates.front(), 16);
  EXPECT_TRUE(std::is_sorted(rates.rbegin(), rates.rend()));
  for (int e = 50; e < 60; ++e) EXPECT_EQ(rates[e], 1);
  EXPECT_EQ(std::set<int>(rates.begin(), rates.end()), (std::set<int>{1, 2, 4, 8, 16}));
  for (const auto* bad : {"fixed", "fixed:3", "fixed:64", "variable:8", "variable:8:0",
                          "variable:x:4", "zip:4", "fixed:4:2"})
    EXPECT_THROW(compression_schedule{bad}, option_error) << bad;
}

TEST(ClosedForms, OneRankMovesNothingAndOneDMovesEveryOtherRanksRows) {
  const trainer::model_config model{.kind = trainer::layer_kind::gcn,
                                    .in_features = 16,
                                    .hidden = 8,
                                    .num_classes = 3,
                                    .layers = 3};
  for (const auto kind : {grid_kind::one_d, grid_kind::two_d, grid_kind::sar}) {
    const auto bytes = predicted_epoch_bytes(grid_layout(kind, 1, 1), 100, model, 500);
    EXPECT_EQ(bytes.forward + bytes.backward + bytes.gradients, 0.0);
  }
  // 1D at P = 4: 3 copies of every row, 16 wide forward at layer 0, 8 wide
  // at layers 1, 2 both ways.
  const auto one_d = predicted_epoch_bytes(grid_layout(grid_kind::one_d, 4, 1), 100, model, 500);
  EXPECT_DOUBLE_EQ(one_d.forward, 3.0 * 4 * 100 * (16 + 8 + 8));
  EXPECT_DOUBLE_EQ(one_d.backward, 3.0 * 4 * 100 * (8 + 8));
  EXPECT_DOUBLE_EQ(one_d.gradients, 4.0 * (2 * 3 * 2000 / 4));
}

TEST(FullBatchTraining, AloneLearnsTheCsbm) {
  const bulkgnn::testing::scratch_dir dir;
  const auto ds = bulkgnn::testing::small_csbm(dir, 600);
  const auto data = trainer::whole_dataset(ds);
  comm::traffic_log log;
  comm::self_communicator self("world", log);
  for (const auto kind : {trainer::layer_kind::gcn, trainer::layer_kind::sage}) {
    full_batch_options options;
    options.model = {.kind = kind, .hidden = 32, .layers = 2, .dropout = 0.5f};
    options.optimizer = {.lr = 0.01f};
    options.epochs = 30;
    options.eval_every = 10;
    const auto result = train_full_batch(data, options, self);
    ASSERT_EQ(result.epochs.size(), 30u);
    EXPECT_LT(result.epochs.back().loss, 0.7 * result.epochs.front().loss);
    ASSERT_TRUE(result.best_epoch.has_value());
    EXPECT_GT(result.best_valid_acc, 0.8) << trainer::layer_kind_name(kind);
    for (const auto& epoch : result.epochs)
      for (const auto& [stage, bytes] : epoch.traffic) EXPECT_EQ(bytes, 0) << stage;
  }
}

TEST(FullBatchTraining, RefusesCompressionOnGridsThatSendPartialSums) {
  full_batch_options options;
  options.grid = grid_kind::two_d;
  options.compression = compression_schedule("fixed:4");
  try {
    validate(options, 4);
    FAIL() << "compression on 2d accepted";
  } catch (const option_error& e) {
    EXPECT_NE(std::string(e.what()).find("--grid 1d or sar"), std::string::npos) << e.what();
  }
  options.grid = grid_kind::sar;
  EXPECT_NO_THROW(validate(options, 4));
}

}  // namespace
}  // namespace bulkgnn::fullbatch
