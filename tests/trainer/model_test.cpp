#include "bulkgnn/trainer/model.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <numeric>
#include <random>

#include "bulkgnn/core/error.hpp"
#include "bulkgnn/core/parallel.hpp"
#include "test_support.hpp"

namespace bulkgnn::trainer {
namespace {

using testing::cpu_exec;

std::span<const float> tensor(const gnn_model& model, const std::string& name) {
  for (const auto& t : model.tensors())
    if (t.name == name) return model.parameters().subspan(t.offset, t.size());
  ADD_FAILURE() << "no tensor " << name;
  return {};
}

using dense = std::vector<std::vector<double>>;

dense to_dense(dense_view<const float> m) {
  dense d(static_cast<std::size_t>(m.rows), std::vector<double>(static_cast<std::size_t>(m.cols)));
  for (std::int64_t r = 0; r < m.rows; ++r)
    for (std::int64_t c = 0; c < m.cols; ++c) d[r][c] = m.row(r)[c];
  return d;
}

// h · W with W stored in × out.
std::vector<double> times(const std::vector<double>& h, std::span<const float> w, std::size_t out) {
  std::vector<double> y(out, 0.0);
  for (std::size_t k = 0; k < h.size(); ++k)
    for (std::size_t j = 0; j < out; ++j) y[j] += h[k] * w[k * out + j];
  return y;
}

// PyG's formulas, written out: SAGEConv (mean) is
// mean_{src ∈ N(dst)} h_src · W_l + b_l + h_dst · W_r; the LADIES GCN layer is
// (Σ_src w · h_src) · W + b; ReLU between layers.
dense naive_forward(const gnn_model& model, const std::vector<csr_matrix>& blocks, dense h) {
  const auto& config = model.config();
  for (int l = 0; l < config.layers; ++l) {
    const auto& block = blocks[l];
    const std::string prefix = "convs." + std::to_string(l) + ".";
    const bool sage = config.kind == layer_kind::sage;
    const auto bias = tensor(model, prefix + (sage ? "lin_l.bias" : "bias"));
    const auto w = tensor(model, prefix + (sage ? "lin_l.weight" : "lin.weight"));
    const std::size_t out = bias.size();
    dense next;
    for (std::int64_t dst = 0; dst < block.rows; ++dst) {
      std::vector<double> aggregated(h[0].size(), 0.0);
      const auto sources = block.view().row(dst);
      for (std::size_t e = 0; e < sources.size(); ++e) {
        const double weight =
            sage ? 1.0 / static_cast<double>(sources.size()) : block.view().row_values(dst)[e];
        for (std::size_t k = 0; k < aggregated.size(); ++k)
          aggregated[k] += weight * h[sources[e]][k];
      }
      auto y = times(aggregated, w, out);
      if (sage) {
        const auto root = times(h[dst], tensor(model, prefix + "lin_r.weight"), out);
        for (std::size_t j = 0; j < out; ++j) y[j] += root[j];
      }
      for (std::size_t j = 0; j < out; ++j) {
        y[j] += bias[j];
        if (l + 1 < config.layers) y[j] = std::max(y[j], 0.0);
      }
      next.push_back(y);
    }
    h = next;
  }
  return h;
}

struct problem {
  std::vector<csr_matrix> raw;
  std::vector<aggregation_block> blocks;
  matrix features;
};

problem random_problem(std::mt19937_64& gen, layer_kind kind, std::vector<std::int64_t> sizes,
                       std::int64_t in_features, int max_degree = 5) {
  problem p;
  for (std::size_t l = 0; l + 1 < sizes.size(); ++l) {
    p.raw.push_back(
        testing::random_block(gen, sizes[l + 1], sizes[l], max_degree, kind == layer_kind::gcn));
    p.blocks.push_back(make_aggregation_block(cpu_exec, p.raw.back(), kind, true));
  }
  p.features = testing::random_matrix(gen, sizes[0], in_features);
  return p;
}

class ForwardMatchesPyG : public ::testing::TestWithParam<layer_kind> {};

TEST_P(ForwardMatchesPyG, OnSampledBlocks) {
  std::mt19937_64 gen(1);
  for (const int layers : {1, 2, 3}) {
    std::vector<std::int64_t> sizes{60, 30, 14, 6};
    sizes.resize(static_cast<std::size_t>(layers) + 1);
    const auto p = random_problem(gen, GetParam(), sizes, 9);
    gnn_model model({.kind = GetParam(),
                     .in_features = 9,
                     .hidden = 11,
                     .num_classes = 4,
                     .layers = layers,
                     .dropout = 0.5f},
                    7);
    const auto logits = model.forward(p.blocks, p.features.view(), std::nullopt);
    const auto expected = naive_forward(model, p.raw, to_dense(p.features.view()));
    ASSERT_EQ(logits.rows, static_cast<std::int64_t>(expected.size()));
    ASSERT_EQ(logits.cols, 4);
    for (std::int64_t r = 0; r < logits.rows; ++r)
      for (std::int64_t c = 0; c < 4; ++c)
        EXPECT_NEAR(logits.row(r)[c], expected[r][c], 1e-5 * (1 + std::abs(expected[r][c])))
            << layers << " layers, row " << r;
  }
}

INSTANTIATE_TEST_SUITE_P(Kinds, ForwardMatchesPyG,
                         ::testing::Values(layer_kind::sage, layer_kind::gcn),
                         [](const auto& info) { return layer_kind_name(info.param); });

TEST(GnnModel, InitialisesLikePyGLinear) {
  gnn_model model({.kind = layer_kind::sage, .in_features = 100, .hidden = 64, .num_classes = 5},
                  3);
  ASSERT_EQ(model.tensors().size(), 6u);
  EXPECT_EQ(model.tensors()[0].name, "convs.0.lin_l.weight");
  EXPECT_EQ(model.tensors()[5].name, "convs.1.lin_l.bias");
  EXPECT_EQ(model.parameters().size(), 2 * 100 * 64 + 64 + 2 * 64 * 5 + 5u);
  EXPECT_EQ(model.gradients().size(), model.parameters().size());
  for (const auto& t : model.tensors()) {
    const double bound = 1.0 / std::sqrt(t.name.starts_with("convs.0") ? 100.0 : 64.0);
    const auto values = model.parameters().subspan(t.offset, t.size());
    const auto [low, high] = std::minmax_element(values.begin(), values.end());
    EXPECT_GE(*low, -bound) << t.name;
    EXPECT_LE(*high, bound) << t.name;
    if (t.size() > 1000) {
      EXPECT_LT(*low, -0.95 * bound) << t.name;
      EXPECT_GT(*high, 0.95 * bound) << t.name;
    }
  }
}

TEST(GnnModel, SameSeedGivesIdenticalParameters) {
  const model_config config{
      .kind = layer_kind::gcn, .in_features = 20, .hidden = 16, .num_classes = 3, .layers = 3};
  const gnn_model a(config, 11), b(config, 11), c(config, 12);
  EXPECT_TRUE(std::ranges::equal(a.parameters(), b.parameters()));
  EXPECT_FALSE(std::ranges::equal(a.parameters(), c.parameters()));
}

// torch.nn.Embedding's N(0, 1), after the layers, which keep the values a
// model without a table draws.
TEST(GnnModel, EmbeddingTableIsStandardNormalAfterUnchangedLayers) {
  const model_config plain{
      .kind = layer_kind::sage, .in_features = 16, .hidden = 8, .num_classes = 3};
  auto with_table = plain;
  with_table.embedding_rows = 1000;
  const gnn_model a(plain, 4), b(with_table, 4);
  ASSERT_EQ(b.tensors().size(), a.tensors().size() + 1);
  const auto& table = b.tensors().back();
  EXPECT_EQ(table.name, "embedding.weight");
  EXPECT_EQ(table.rows, 1000);
  EXPECT_EQ(table.cols, 16);
  EXPECT_EQ(table.offset, a.parameters().size());
  EXPECT_TRUE(std::ranges::equal(a.parameters(), b.parameters().first(a.parameters().size())));
  const auto values = b.embedding().data;
  ASSERT_EQ(values.size(), 16000u);
  double sum = 0;
  double squares = 0;
  for (const float v : values) {
    sum += v;
    squares += static_cast<double>(v) * v;
  }
  const auto n = static_cast<double>(values.size());
  // Standard errors: 1/√n for the mean, √(2/n) for the variance; 5 of them.
  EXPECT_NEAR(sum / n, 0.0, 5.0 / std::sqrt(n));
  EXPECT_NEAR(squares / n - (sum / n) * (sum / n), 1.0, 5.0 * std::sqrt(2.0 / n));
}

// forward_embedded is forward over the table's rows, on every back end, and
// its gradient places the input gradient at those rows.
TEST(GnnModel, ForwardEmbeddedIsForwardOverTheTablesRows) {
  std::mt19937_64 gen(6);
  const auto p = random_problem(gen, layer_kind::sage, {30, 14, 6}, 5);
  std::vector<vertex_t> ids(30);
  std::iota(ids.begin(), ids.end(), 10);
  std::ranges::shuffle(ids, gen);
  const model_config config{.kind = layer_kind::sage,
                            .in_features = 5,
                            .hidden = 7,
                            .num_classes = 2,
                            .embedding_rows = 45};
  const matrix grad = testing::random_matrix(gen, 6, 2);
  std::vector<float> first_gradients;
  for (const auto kind : {backend::cpu, backend::reference}) {
    gnn_model model(config, 9, executor{kind});
    const auto table = model.embedding();
    matrix rows(30, 5);
    for (std::size_t i = 0; i < ids.size(); ++i)
      std::ranges::copy(table.row(ids[i]), rows.view().row(static_cast<std::int64_t>(i)).begin());
    const std::vector<float> expected = [&] {
      const auto logits = model.forward(p.blocks, rows.view(), std::nullopt);
      return std::vector<float>(logits.data.begin(), logits.data.end());
    }();
    model.backward(grad.view(), true);
    const std::vector<float> input_gradient(model.input_gradient().data.begin(),
                                            model.input_gradient().data.end());
    const auto logits = model.forward_embedded(p.blocks, ids, std::nullopt);
    EXPECT_TRUE(std::ranges::equal(logits.data, expected)) << backend_name(kind);
    model.backward(grad.view());
    const auto& slot = model.tensors().back();
    const auto gradients = model.gradients().subspan(slot.offset, slot.size());
    std::vector<float> placed(slot.size(), 0.0f);
    for (std::size_t i = 0; i < ids.size(); ++i)
      std::copy_n(input_gradient.begin() + static_cast<std::ptrdiff_t>(i * 5), 5,
                  placed.begin() + static_cast<std::ptrdiff_t>(ids[i] * 5));
    EXPECT_TRUE(std::ranges::equal(gradients, placed)) << backend_name(kind);
    if (first_gradients.empty())
      first_gradients.assign(model.gradients().begin(), model.gradients().end());
    else
      EXPECT_TRUE(std::ranges::equal(model.gradients(), first_gradients)) << "cpu = reference";
  }
  gnn_model without({.in_features = 5, .hidden = 7, .num_classes = 2}, 9);
  EXPECT_THROW(without.forward_embedded(p.blocks, ids, std::nullopt), option_error);
  gnn_model model(config, 9);
  EXPECT_THROW(model.forward_embedded(p.blocks, std::span(ids).first(29), std::nullopt),
               option_error);
  auto repeated = ids;
  repeated[3] = repeated[4];
  EXPECT_THROW(model.forward_embedded(p.blocks, repeated, std::nullopt), option_error);
  auto outside = ids;
  outside[0] = 45;
  EXPECT_THROW(model.forward_embedded(p.blocks, outside, std::nullopt), option_error);
}

TEST(GnnModel, PredictFullGraphEqualsForwardOnTheFullGraphBlockPerLayer) {
  std::mt19937_64 gen(2);
  for (const auto kind : {layer_kind::sage, layer_kind::gcn}) {
    csr_matrix graph = testing::random_block(gen, 80, 80, 6, false);
    const auto full = full_graph_block(cpu_exec, graph.view(), kind, true);
    const matrix features = testing::random_matrix(gen, 80, 10);
    gnn_model model({.kind = kind, .in_features = 10, .hidden = 12, .num_classes = 3, .layers = 3},
                    5);
    const std::vector<aggregation_block> blocks(3, full);
    const auto logits = model.forward(blocks, features.view(), std::nullopt);
    const matrix predicted = predict_full_graph(model, full, features.view());
    EXPECT_TRUE(std::ranges::equal(logits.data, predicted.data())) << layer_kind_name(kind);
  }
}

TEST(GnnModel, CountsItsGemms) {
  std::mt19937_64 gen(3);
  const auto p = random_problem(gen, layer_kind::sage, {40, 20, 8}, 6);
  gnn_model model({.in_features = 6, .hidden = 10, .num_classes = 3}, 1);
  const auto logits = model.forward(p.blocks, p.features.view(), std::nullopt);
  EXPECT_EQ(model.gemm().calls, 4);
  const matrix grad(logits.rows, logits.cols);
  model.backward(grad.view());
  // Per layer: two weight gradients; layer 1 also two input gradients.
  EXPECT_EQ(model.gemm().calls, 4 + 4 + 2);
  EXPECT_GT(model.gemm().flops, 0.0);
  model.reset_gemm_stats();
  EXPECT_EQ(model.gemm().calls, 0);
}

TEST(GnnModel, RejectsMismatchedInputsNamingThem) {
  std::mt19937_64 gen(4);
  auto p = random_problem(gen, layer_kind::sage, {40, 20, 8}, 6);
  gnn_model model({.in_features = 6, .hidden = 10, .num_classes = 3}, 1);
  EXPECT_THROW(model.forward(std::span(p.blocks).first(1), p.features.view(), std::nullopt),
               option_error);
  const matrix narrow(40, 5);
  EXPECT_THROW(model.forward(p.blocks, narrow.view(), std::nullopt), option_error);
  std::swap(p.blocks[0], p.blocks[1]);
  EXPECT_THROW(model.forward(p.blocks, p.features.view(), std::nullopt), option_error);
  const matrix grad(8, 3);
  EXPECT_THROW(model.backward(grad.view()), option_error) << "no forward yet";

  auto inference_only = random_problem(gen, layer_kind::sage, {40, 20, 8}, 6);
  for (auto& b : inference_only.blocks) b.backward = {};
  model.forward(inference_only.blocks, inference_only.features.view(), std::nullopt);
  EXPECT_THROW(model.backward(grad.view()), option_error);
}

TEST(ModelConfig, RejectsImpossibleOptionsNamingThem) {
  const auto message = [](model_config c) {
    try {
      validate(c);
    } catch (const option_error& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  const model_config ok{.in_features = 4, .num_classes = 2};
  EXPECT_EQ(message(ok), "");
  auto c = ok;
  c.layers = 0;
  EXPECT_NE(message(c).find("model_config.layers"), std::string::npos);
  c = ok;
  c.hidden = 0;
  EXPECT_NE(message(c).find("model_config.hidden"), std::string::npos);
  c = ok;
  c.dropout = 1.0f;
  EXPECT_NE(message(c).find("model_config.dropout"), std::string::npos);
  c = ok;
  c.dropout = -0.1f;
  EXPECT_NE(message(c).find("model_config.dropout"), std::string::npos);
  c = ok;
  c.num_classes = 0;
  EXPECT_NE(message(c), "");
}

// Forward logits, parameter gradients and input gradient of one step.
struct step_result {
  std::vector<float> logits;
  std::vector<float> gradients;
  std::vector<float> input_gradient;
};

step_result train_step(gnn_model& model, const problem& p, const matrix& grad_logits) {
  const auto logits = model.forward(p.blocks, p.features.view(), kernels::dropout_key{1, 2, 3});
  step_result r{{logits.data.begin(), logits.data.end()}, {}, {}};
  model.backward(grad_logits.view(), true);
  r.gradients.assign(model.gradients().begin(), model.gradients().end());
  r.input_gradient.assign(model.input_gradient().data.begin(), model.input_gradient().data.end());
  return r;
}

// The model's GEMM statistics count every call's flops (2·M·N·K) and calls.
TEST(GnnModel, CountsGemmFlopsAndCalls) {
  std::mt19937_64 gen(4);
  const auto p = random_problem(gen, layer_kind::gcn, {5, 3}, 4, 2);
  gnn_model model({.kind = layer_kind::gcn, .in_features = 4, .num_classes = 5, .layers = 1}, 1);
  model.forward(p.blocks, p.features.view(), std::nullopt);
  model.forward(p.blocks, p.features.view(), std::nullopt);
  EXPECT_EQ(model.gemm().calls, 2);
  EXPECT_EQ(model.gemm().flops, 2 * 2.0 * 3 * 4 * 5);
  // Two forward passes ran their GEMMs inside the stopwatch.
  EXPECT_GT(model.gemm().seconds, 0.0);
}

// Large enough that the GEMM and oneTBB both split the work.
// The thread counts compared with one thread; under the sanitizers (memory,
// not bits, several times slower) the odd count alone.
#ifdef BULKGNN_SANITIZED_BUILD
constexpr int model_thread_counts[] = {3};
#else
constexpr int model_thread_counts[] = {2, 3, 5};
#endif

TEST(GnnModel, ForwardAndBackwardDoNotDependOnThreads) {
  for (const auto kind : {layer_kind::sage, layer_kind::gcn}) {
    std::mt19937_64 gen(6);
    const auto p = random_problem(gen, kind, {3000, 1200, 400}, 64, 10);
    const matrix grad_logits = testing::random_matrix(gen, 400, 16);
    const model_config config{.kind = kind, .in_features = 64, .hidden = 128, .num_classes = 16};
    gnn_model model(config, 9);
    step_result one;
    {
      const thread_limit limit(1);
      one = train_step(model, p, grad_logits);
    }
    for (const int threads : model_thread_counts) {
      const thread_limit limit(threads);
      const auto run = train_step(model, p, grad_logits);
      const auto what = layer_kind_name(kind) + ", " + std::to_string(threads) + " threads";
      EXPECT_EQ(run.logits, one.logits) << what;
      EXPECT_EQ(run.gradients, one.gradients) << what;
      EXPECT_EQ(run.input_gradient, one.input_gradient) << what;
    }
    gnn_model twin(config, 9);
    const auto again = train_step(twin, p, grad_logits);
    EXPECT_EQ(again.gradients, one.gradients) << "same seed, same step";
  }
}

}  // namespace
}  // namespace bulkgnn::trainer
