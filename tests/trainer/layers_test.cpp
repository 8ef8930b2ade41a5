#include "bulkgnn/trainer/layers.hpp"

#include "bulkgnn/sampler/sampler_table.hpp"
#include "bulkgnn/trainer/layer_table.hpp"
#include "bulkgnn/trainer/model.hpp"

#include "bulkgnn/kernels/activation.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <set>
#include <string>
#include <tuple>

#include "bulkgnn/core/error.hpp"
#include "bulkgnn/core/parallel.hpp"
#include "bulkgnn/core/rng.hpp"
#include "test_support.hpp"

namespace bulkgnn::trainer {
namespace {

using testing::cpu_exec;

TEST(LayerKind, ParsesItsOwnNames) {
  for (const auto kind : {layer_kind::sage, layer_kind::gcn})
    EXPECT_EQ(parse_layer_kind(layer_kind_name(kind)), kind);
  EXPECT_THROW((void)parse_layer_kind("gat"), option_error);
}

TEST(LayerTable, EachKindHasOneEntryUnderItsOwnName) {
  std::set<std::string_view> names;
  for (const auto& entry : layer_table()) {
    EXPECT_TRUE(names.insert(entry.name).second) << entry.name;
    EXPECT_EQ(&find_layer(entry.kind), &find_layer(entry.name, "--model")) << entry.name;
    EXPECT_FALSE(entry.weight_name.empty() || entry.bias_name.empty() || entry.summary.empty());
    // Each use takes the weights its builder makes: make_aggregation_block,
    // full_graph_block (and share inference), normalised_rows.
    EXPECT_TRUE(entry.sampled_block == adjacency_weights::row_mean ||
                entry.sampled_block == adjacency_weights::as_sampled)
        << entry.name;
    EXPECT_TRUE(entry.full_graph == adjacency_weights::row_mean ||
                entry.full_graph == adjacency_weights::row_mean_with_self_loops)
        << entry.name;
    EXPECT_TRUE(entry.full_batch == adjacency_weights::row_mean ||
                entry.full_batch == adjacency_weights::symmetric_with_self_loops)
        << entry.name;
  }
  try {
    std::ignore = find_layer("gat", "--model");
    FAIL() << "gat is not registered";
  } catch (const option_error& e) {
    EXPECT_NE(std::string(e.what()).find("--model: unknown layer kind 'gat' (expected " +
                                         layer_names() + ")"),
              std::string::npos)
        << e.what();
  }
}

TEST(LayerTable, EverySamplerHandsItsBlocksToARegisteredLayer) {
  for (const auto& sampler : sampler::sampler_table())
    EXPECT_NO_THROW(std::ignore = find_layer(sampler.layer, "sampler_entry.layer")) << sampler.name;
}

// The model's tensors follow the entry: PyG's names, a root weight where the
// layer has one.
TEST(LayerTable, TheModelHoldsTheTensorsItsEntryNames) {
  for (const auto& entry : layer_table()) {
    const gnn_model model(
        {.kind = entry.kind, .in_features = 4, .hidden = 3, .num_classes = 2, .layers = 2}, 1);
    std::vector<std::string> expected;
    for (int l = 0; l < 2; ++l) {
      const auto prefix = "convs." + std::to_string(l) + ".";
      expected.push_back(prefix + std::string(entry.weight_name));
      if (entry.has_root_weight()) expected.push_back(prefix + std::string(entry.root_weight_name));
      expected.push_back(prefix + std::string(entry.bias_name));
    }
    std::vector<std::string> names;
    for (const auto& tensor : model.tensors()) names.push_back(tensor.name);
    EXPECT_EQ(names, expected) << entry.name;
  }
}

TEST(AggregationBlock, SageAveragesOverStoredEntriesIgnoringValues) {
  std::mt19937_64 gen(1);
  const csr_matrix block = testing::random_block(gen, 30, 50, 6, true);
  const auto agg = make_aggregation_block(cpu_exec, block, layer_kind::sage, false);
  EXPECT_EQ(agg.forward.indices, block.indices);
  EXPECT_EQ(agg.forward.indptr, block.indptr);
  for (std::int64_t r = 0; r < block.rows; ++r)
    for (const float w : agg.forward.view().row_values(r))
      EXPECT_FLOAT_EQ(w, 1.0f / static_cast<float>(block.view().degree(r)));
  EXPECT_EQ(agg.backward.rows, 0);
}

TEST(AggregationBlock, GcnKeepsTheBlockWeightsAndBackwardIsTheTranspose) {
  std::mt19937_64 gen(2);
  const csr_matrix block = testing::random_block(gen, 20, 45, 5, true);
  const auto agg = make_aggregation_block(cpu_exec, block, layer_kind::gcn, true);
  EXPECT_EQ(agg.forward.values, block.values);
  ASSERT_EQ(agg.backward.rows, block.cols);
  ASSERT_EQ(agg.backward.cols, block.rows);
  const auto to_dense = [](const csr_matrix& m, bool transposed) {
    std::vector<float> d(static_cast<std::size_t>(m.rows * m.cols), 0.0f);
    for (std::int64_t r = 0; r < m.rows; ++r)
      for (edge_t e = m.indptr[r]; e < m.indptr[r + 1]; ++e)
        d[transposed ? m.indices[e] * m.rows + r : r * m.cols + m.indices[e]] = m.values[e];
    return d;
  };
  EXPECT_EQ(to_dense(agg.backward, false), to_dense(block, true));
}

TEST(AggregationBlock, GcnNeedsWeights) {
  std::mt19937_64 gen(3);
  const csr_matrix pattern = testing::random_block(gen, 10, 20, 3, false);
  EXPECT_THROW((void)make_aggregation_block(cpu_exec, pattern, layer_kind::gcn, false),
               option_error);
}

// A drawn subgraph whose seeds read no edge gives blocks without entries,
// and so without values: weighted layers take them (the aggregation is 0).
TEST(AggregationBlock, WeightedLayersTakeABlockWithoutEntries) {
  csr_matrix empty;
  empty.rows = 3;
  empty.cols = 5;
  empty.indptr.assign(4, 0);
  for (const auto kind : {layer_kind::gcn, layer_kind::graph_conv}) {
    const auto agg = make_aggregation_block(cpu_exec, empty, kind, true);
    EXPECT_EQ(agg.forward.nnz(), 0);
    EXPECT_EQ(agg.backward.rows, 5);
  }
}

TEST(AggregationBlock, RejectsMoreDestinationsThanSources) {
  std::mt19937_64 gen(4);
  csr_matrix block = testing::random_block(gen, 10, 10, 3, false);
  block.cols = 9;
  block.indices.assign(block.indices.size(), 0);
  EXPECT_THROW((void)make_aggregation_block(cpu_exec, block, layer_kind::sage, false),
               option_error);
}

csr_matrix small_graph() {
  // 0 ← {1, 2}, 1 ← {0, 1}, 2 ← {}, 3 ← {0, 1, 2}; vertex 1 has a self loop.
  csr_matrix g;
  g.rows = g.cols = 4;
  g.indptr = {0, 2, 4, 4, 7};
  g.indices = {1, 2, 0, 1, 0, 1, 2};
  return g;
}

TEST(FullGraphBlock, GcnRowsSumToOneAndHoldTheirSelfLoop) {
  const auto full = full_graph_block(cpu_exec, small_graph().view(), layer_kind::gcn);
  ASSERT_EQ(full.forward.rows, 4);
  ASSERT_EQ(full.forward.cols, 4);
  for (std::int64_t v = 0; v < 4; ++v) {
    const auto columns = full.forward.view().row(v);
    const auto values = full.forward.view().row_values(v);
    EXPECT_NEAR(std::accumulate(values.begin(), values.end(), 0.0), 1.0, 1e-6);
    EXPECT_NE(std::find(columns.begin(), columns.end(), v), columns.end()) << "vertex " << v;
  }
  // D̃⁻¹(A+I): vertex 0 has degree 2 + 1; vertex 1's existing loop counts twice.
  EXPECT_EQ(full.forward.view().row(0).size(), 3u);
  EXPECT_FLOAT_EQ(full.forward.view().row_values(0)[0], 1.0f / 3.0f);
  EXPECT_EQ(full.forward.view().row(1).size(), 2u);
  EXPECT_FLOAT_EQ(full.forward.view().row_values(1)[1], 2.0f / 3.0f);
  EXPECT_EQ(full.forward.view().row(2).size(), 1u);
  EXPECT_FLOAT_EQ(full.forward.view().row_values(2)[0], 1.0f);
}

TEST(FullGraphBlock, SageAveragesOverInNeighbours) {
  const auto full = full_graph_block(cpu_exec, small_graph().view(), layer_kind::sage, true);
  EXPECT_EQ(full.forward.indices, small_graph().indices);
  EXPECT_EQ(full.forward.values,
            (std::vector<float>{0.5f, 0.5f, 0.5f, 0.5f, 1.0f / 3, 1.0f / 3, 1.0f / 3}));
  EXPECT_EQ(full.backward.rows, 4);
  EXPECT_EQ(full.backward.nnz(), 7);
}

TEST(ReluDropout, GradientMatchesFiniteDifferencesWithAFixedKey) {
  std::mt19937_64 gen(6);
  matrix x = testing::random_matrix(gen, 12, 9);
  // Kinks sit at 0: keep every input well away from them.
  for (float& v : x.data()) v += v < 0 ? -0.1f : 0.1f;
  const matrix weights = testing::random_matrix(gen, 12, 9);
  const kernels::dropout_key key{3, 4, 5};
  const float p = 0.4f;
  const auto loss = [&] {
    matrix y = x;
    kernels::relu_dropout(cpu_exec, y.view(), p, key, 1);
    return testing::projection(y.view(), weights);
  };
  matrix y = x;
  kernels::relu_dropout(cpu_exec, y.view(), p, key, 1);
  matrix grad = weights;
  kernels::relu_dropout_backward(cpu_exec, y.view(), p, true, grad.view());
  const auto indices = testing::sample_indices(gen, x.data().size(), 1000);
  const auto check = testing::check_gradient(x.data(), grad.data(), indices, loss);
  testing::expect_gradient_matches(check, "relu+dropout");
  EXPECT_EQ(check.at_kinks, 0);
  EXPECT_GT(std::count(grad.data().begin(), grad.data().end(), 0.0f), 20) << "some dropped";
}

}  // namespace
}  // namespace bulkgnn::trainer
