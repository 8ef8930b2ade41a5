// Central-difference checks of every analytic gradient of the model. Within
// one ReLU pattern the logits are linear in any single parameter or input,
// so the differences are exact up to float rounding; entries whose step
// crosses a ReLU kink are recognised and checked one-sided (see
// check_gradient).

#include <gtest/gtest.h>

#include <algorithm>
#include <numeric>
#include <random>

#include "bulkgnn/trainer/model.hpp"
#include "test_support.hpp"

namespace bulkgnn::trainer {
namespace {

struct model_case {
  layer_kind kind;
  int layers;
  bool dropout;
};

std::string case_name(const model_case& c) {
  return layer_kind_name(c.kind) + std::to_string(c.layers) + (c.dropout ? "Dropout" : "");
}

// A small random model and minibatch with a projection loss Σ R ⊙ logits.
class gradient_fixture {
 public:
  explicit gradient_fixture(const model_case& c, std::uint64_t seed = 1)
      : gen_(seed),
        model_({.kind = c.kind,
                .in_features = 6,
                .hidden = 8,
                .num_classes = 4,
                .layers = c.layers,
                .dropout = 0.4f},
               static_cast<std::uint32_t>(seed)) {
    std::vector<std::int64_t> sizes{40, 24, 12, 5};
    sizes.erase(sizes.begin(), sizes.end() - c.layers - 1);
    blocks_ = testing::random_blocks(gen_, sizes, c.kind);
    features_ = testing::random_matrix(gen_, sizes.front(), 6);
    weights_ = testing::random_matrix(gen_, sizes.back(), 4);
    if (c.dropout) key_ = kernels::dropout_key{5, 6, 7};
  }

  double loss() {
    return testing::projection(model_.forward(blocks_, features_.view(), key_), weights_);
  }

  // Runs forward and backward, returning copies of the analytic gradients
  // with respect to the parameters and the features.
  std::pair<std::vector<float>, std::vector<float>> analytic() {
    model_.forward(blocks_, features_.view(), key_);
    model_.backward(weights_.view(), true);
    return {{model_.gradients().begin(), model_.gradients().end()},
            {model_.input_gradient().data.begin(), model_.input_gradient().data.end()}};
  }

  // Checks every tensor (up to 300 sampled entries each) and the features
  // against `gradients` and `input_gradient`.
  std::vector<std::pair<std::string, testing::gradient_check>> check(
      const std::vector<float>& gradients, const std::vector<float>& input_gradient) {
    std::vector<std::pair<std::string, testing::gradient_check>> results;
    const auto loss = [this] { return this->loss(); };
    for (const auto& t : model_.tensors()) {
      auto indices = testing::sample_indices(gen_, t.size(), 300);
      for (auto& i : indices) i += t.offset;
      results.emplace_back(t.name,
                           testing::check_gradient(model_.parameters(), gradients, indices, loss));
    }
    const auto indices = testing::sample_indices(gen_, features_.data().size(), 300);
    results.emplace_back("features",
                         testing::check_gradient(features_.data(), input_gradient, indices, loss));
    return results;
  }

  const gnn_model& model() const { return model_; }

 private:
  std::mt19937_64 gen_;
  gnn_model model_;
  std::vector<aggregation_block> blocks_;
  matrix features_;
  matrix weights_;
  std::optional<kernels::dropout_key> key_;
};

class ModelGradient : public ::testing::TestWithParam<model_case> {};

TEST_P(ModelGradient, MatchesCentralDifferences) {
  gradient_fixture fixture(GetParam());
  const auto [gradients, input_gradient] = fixture.analytic();
  int checked = 0;
  int at_kinks = 0;
  for (const auto& [name, check] : fixture.check(gradients, input_gradient)) {
    testing::expect_gradient_matches(check, name);
    checked += check.checked;
    at_kinks += check.at_kinks;
  }
  // Mostly smooth, so mostly checked by central differences.
  EXPECT_LE(at_kinks * 10, checked);
}

// One layer alone is the SAGE layer (both weights, the bias and the input)
// or the GCN layer.
INSTANTIATE_TEST_SUITE_P(Layers, ModelGradient,
                         ::testing::Values(model_case{layer_kind::sage, 1, false},
                                           model_case{layer_kind::gcn, 1, false}),
                         [](const auto& info) { return case_name(info.param); });

INSTANTIATE_TEST_SUITE_P(Models, ModelGradient,
                         ::testing::Values(model_case{layer_kind::sage, 2, true},
                                           model_case{layer_kind::sage, 3, true},
                                           model_case{layer_kind::gcn, 2, true},
                                           model_case{layer_kind::gcn, 3, true},
                                           model_case{layer_kind::sage, 2, false},
                                           model_case{layer_kind::gcn, 3, false}),
                         [](const auto& info) { return case_name(info.param); });

TEST(GradientCheck, SingleLayerHasNoKinks) {
  for (const auto kind : {layer_kind::sage, layer_kind::gcn}) {
    gradient_fixture fixture({kind, 1, false});
    const auto [gradients, input_gradient] = fixture.analytic();
    for (const auto& [name, check] : fixture.check(gradients, input_gradient))
      EXPECT_EQ(check.at_kinks, 0) << name;
  }
}

TEST(GradientCheck, RejectsASlightlyWrongGradient) {
  gradient_fixture fixture({layer_kind::sage, 2, true});
  auto [gradients, input_gradient] = fixture.analytic();
  // Three percent too large: far above the float noise (about 3e-5 here), so
  // every tensor has entries large enough to expose it.
  for (float& g : gradients) g *= 1.03f;
  for (float& g : input_gradient) g *= 1.03f;
  for (const auto& [name, check] : fixture.check(gradients, input_gradient))
    EXPECT_GT(check.failed, 0) << name;
}

TEST(GradientCheck, RejectsOneWrongEntry) {
  gradient_fixture fixture({layer_kind::gcn, 2, true});
  auto [gradients, input_gradient] = fixture.analytic();
  const auto& w = fixture.model().tensors()[2];
  gradients[w.offset + 3] += 0.05f;
  const auto results = fixture.check(gradients, input_gradient);
  for (std::size_t t = 0; t < results.size(); ++t)
    EXPECT_EQ(results[t].second.failed, t == 2 ? 1 : 0) << results[t].first;
}

// A learned input embedding: the rows a minibatch reads get the loss's
// gradient, every other row exactly zero.
TEST(GradientCheck, EmbeddingRowsMatchCentralDifferences) {
  constexpr std::int64_t rows = 50;
  std::mt19937_64 gen(3);
  gnn_model model({.kind = layer_kind::sage,
                   .in_features = 6,
                   .hidden = 8,
                   .num_classes = 4,
                   .layers = 2,
                   .dropout = 0.4f,
                   .embedding_rows = rows},
                  3);
  const auto blocks = testing::random_blocks(gen, {24, 12, 5}, layer_kind::sage);
  std::vector<vertex_t> ids(rows);
  std::iota(ids.begin(), ids.end(), 0);
  std::ranges::shuffle(ids, gen);
  ids.resize(24);
  const auto weights = testing::random_matrix(gen, 5, 4);
  const kernels::dropout_key key{5, 6, 7};
  const auto loss = [&] {
    return testing::projection(model.forward_embedded(blocks, ids, key), weights);
  };
  model.forward_embedded(blocks, ids, key);
  model.backward(weights.view());
  const std::vector<float> gradients(model.gradients().begin(), model.gradients().end());
  const auto& table = model.tensors().back();
  ASSERT_EQ(table.name, "embedding.weight");
  std::vector<std::size_t> indices(table.size());
  std::iota(indices.begin(), indices.end(), table.offset);
  const auto check = testing::check_gradient(model.parameters(), gradients, indices, loss);
  testing::expect_gradient_matches(check, table.name);
  EXPECT_EQ(check.checked, static_cast<int>(table.size()));
  std::vector<bool> read(rows, false);
  for (const vertex_t v : ids) read[static_cast<std::size_t>(v)] = true;
  for (std::int64_t r = 0; r < rows; ++r) {
    if (read[static_cast<std::size_t>(r)]) continue;
    for (std::int64_t c = 0; c < 6; ++c)
      EXPECT_EQ(gradients[table.offset + static_cast<std::size_t>(r * 6 + c)], 0.0f)
          << "row " << r << " is not an input";
  }
}

}  // namespace
}  // namespace bulkgnn::trainer
