#include "bulkgnn/trainer/share_inference.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <random>

#include "bulkgnn/core/error.hpp"
#include "bulkgnn/trainer/model.hpp"
#include "test_support.hpp"

namespace bulkgnn::trainer {
namespace {

using testing::cpu_exec;

// A graph whose rows are sorted but keep repeated columns and some self
// loops: what a gcn layer merges into counts and a sage layer weighs entry
// by entry.
csr_matrix multigraph(std::mt19937_64& gen, std::int64_t n, int max_degree) {
  csr_matrix m;
  m.rows = n;
  m.cols = n;
  std::uniform_int_distribution<int> degree(0, max_degree);
  std::uniform_int_distribution<vertex_t> column(0, static_cast<vertex_t>(n - 1));
  std::bernoulli_distribution self_loop(0.2);
  for (std::int64_t r = 0; r < n; ++r) {
    std::vector<vertex_t> row;
    for (int k = degree(gen); k > 0; --k) row.push_back(column(gen));
    if (self_loop(gen)) row.push_back(static_cast<vertex_t>(r));
    std::sort(row.begin(), row.end());
    m.indices.insert(m.indices.end(), row.begin(), row.end());
    m.indptr.push_back(static_cast<edge_t>(m.indices.size()));
  }
  return m;
}

// Every piece size, from one vertex to more than the graph holds, gives
// predict_full_graph's logits bit for bit, for both layer kinds and depths.
TEST(PredictInPieces, EqualsTheWholeGraphBitForBit) {
  std::mt19937_64 gen(7);
  constexpr std::int64_t n = 300;
  const csr_matrix graph = multigraph(gen, n, 8);
  const matrix features = testing::random_matrix(gen, n, 12);
  for (const auto kind : {layer_kind::sage, layer_kind::gcn})
    for (const int layers : {1, 2, 3}) {
      const gnn_model model(
          {.kind = kind, .in_features = 12, .hidden = 16, .num_classes = 5, .layers = layers}, 3);
      const matrix whole = predict_full_graph(model, full_graph_block(cpu_exec, graph.view(), kind),
                                              features.view());
      for (const std::int64_t piece_rows : {1, 7, 64, 299, 300, 1000}) {
        const matrix pieces = predict_in_pieces(
            model, {.graph = graph.view(), .features = features.view(), .num_vertices = n},
            piece_rows);
        ASSERT_EQ(pieces.rows(), n);
        ASSERT_EQ(pieces.cols(), 5);
        EXPECT_TRUE(std::ranges::equal(whole.data(), pieces.data()))
            << layer_kind_name(kind) << ", " << layers << " layers, pieces of " << piece_rows;
      }
    }
}

// The input rows are normalised as they are read, as a normalised copy of
// every row would be.
TEST(PredictInPieces, NormalisesInputRowsAsTheyAreRead) {
  std::mt19937_64 gen(8);
  constexpr std::int64_t n = 120;
  const csr_matrix graph = multigraph(gen, n, 5);
  const matrix features = testing::random_matrix(gen, n, 6, -2.0f, 3.0f);
  const loader::row_normalizer normalizer(features.view());
  matrix normalised(n, 6);
  std::ranges::copy(features.data(), normalised.data().begin());
  normalizer.apply_to_all(normalised.view());
  const gnn_model model({.kind = layer_kind::gcn, .in_features = 6, .hidden = 8, .num_classes = 3},
                        4);
  const matrix whole = predict_full_graph(
      model, full_graph_block(cpu_exec, graph.view(), layer_kind::gcn), normalised.view());
  const matrix pieces = predict_in_pieces(model,
                                          {.graph = graph.view(),
                                           .features = features.view(),
                                           .normalizer = &normalizer,
                                           .num_vertices = n},
                                          17);
  EXPECT_TRUE(std::ranges::equal(whole.data(), pieces.data()));
}

// Kept pieces serve every later evaluation: a model whose weights changed
// gets its own logits, as fresh pieces would give them; a model of another
// kind of layer is refused.
TEST(PredictInPieces, KeptPiecesServeLaterEvaluations) {
  std::mt19937_64 gen(10);
  constexpr std::int64_t n = 150;
  const csr_matrix graph = multigraph(gen, n, 6);
  const matrix features = testing::random_matrix(gen, n, 7);
  const inference_inputs inputs{
      .graph = graph.view(), .features = features.view(), .num_vertices = n};
  const inference_pieces pieces(inputs, layer_kind::sage, 32);
  for (const std::uint64_t seed : {1, 2, 3}) {
    const gnn_model model({.in_features = 7, .hidden = 8, .num_classes = 4, .layers = 2}, seed);
    const matrix kept = pieces.predict(model, inputs);
    const matrix fresh = predict_in_pieces(model, inputs, 32);
    EXPECT_TRUE(std::ranges::equal(kept.data(), fresh.data())) << "weights of seed " << seed;
  }
  const gnn_model gcn({.kind = layer_kind::gcn, .in_features = 7, .hidden = 8, .num_classes = 4},
                      1);
  EXPECT_THROW((void)pieces.predict(gcn, inputs), option_error);
}

TEST(PredictInPieces, RejectsImpossibleInputsNamingThem) {
  std::mt19937_64 gen(9);
  const csr_matrix graph = multigraph(gen, 50, 3);
  const matrix features = testing::random_matrix(gen, 50, 4);
  const gnn_model model({.in_features = 4, .hidden = 8, .num_classes = 2}, 1);
  const inference_inputs inputs{
      .graph = graph.view(), .features = features.view(), .num_vertices = 50};
  const auto message = [&](const inference_inputs& in, std::int64_t piece_rows) {
    try {
      (void)predict_in_pieces(model, in, piece_rows);
    } catch (const option_error& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_NE(message(inputs, 0).find("rows_per_piece is 0"), std::string::npos);
  auto fewer_rows = inputs;
  fewer_rows.num_vertices = 60;
  EXPECT_NE(message(fewer_rows, 10).find("not 60"), std::string::npos);
  const data_parallel parallel;
  auto shared = inputs;
  shared.parallel = &parallel;
  EXPECT_NE(message(shared, 10).find("predict_share"), std::string::npos);
}

}  // namespace
}  // namespace bulkgnn::trainer
