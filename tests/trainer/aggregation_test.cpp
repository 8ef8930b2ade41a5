#include "bulkgnn/trainer/aggregation.hpp"

#include "bulkgnn/core/error.hpp"
#include "bulkgnn/kernels/spmm.hpp"
#include "bulkgnn/trainer/model.hpp"
#include "test_support.hpp"

#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <span>
#include <string>
#include <vector>

// The model's sparse step goes through its aggregation and nowhere else, so
// a distributed scheme that installs its own sees every call.
namespace bulkgnn::trainer {
namespace {

using testing::cpu_exec;

// The local product, with every call counted and its layer recorded.
class counting_aggregation final : public aggregation {
 public:
  void forward(const executor& exec, int layer, const aggregation_block& block,
               dense_view<const float> x, dense_view<float> out) override {
    ++forward_calls;
    layers_seen += layer;
    local_.forward(exec, layer, block, x, out);
  }
  void backward(const executor& exec, int layer, const aggregation_block& block,
                dense_view<const float> grad_out, dense_view<float> grad_x) override {
    ++backward_calls;
    local_.backward(exec, layer, block, grad_out, grad_x);
  }
  int forward_calls = 0;
  int backward_calls = 0;
  int layers_seen = 0;

 private:
  local_aggregation local_;
};

bool same_bits(dense_view<const float> a, dense_view<const float> b) {
  return a.rows == b.rows && a.cols == b.cols &&
         std::memcmp(a.data.data(), b.data.data(), a.data.size_bytes()) == 0;
}

TEST(Aggregation, EverySparseStepOfTheModelGoesThroughIt) {
  for (const layer_kind kind : {layer_kind::sage, layer_kind::gcn}) {
    std::mt19937_64 gen(11);
    const auto blocks = testing::random_blocks(gen, {50, 24, 9}, kind);
    const auto features = testing::random_matrix(gen, 50, 7);
    const model_config config{
        .kind = kind, .in_features = 7, .hidden = 8, .num_classes = 3, .layers = 2};
    gnn_model plain(config, 5, cpu_exec);
    gnn_model seamed(config, 5, cpu_exec);
    counting_aggregation counter;
    seamed.set_aggregation(counter);

    const auto expected = plain.forward(blocks, features.view(), std::nullopt);
    const auto logits = seamed.forward(blocks, features.view(), std::nullopt);
    EXPECT_TRUE(same_bits(expected, logits));
    EXPECT_EQ(counter.forward_calls, 2);
    EXPECT_EQ(counter.layers_seen, 0 + 1);

    const auto grad = testing::random_matrix(gen, logits.rows, logits.cols);
    plain.backward(grad.view(), true);
    seamed.backward(grad.view(), true);
    EXPECT_EQ(counter.backward_calls, 2);
    EXPECT_EQ(std::memcmp(plain.gradients().data(), seamed.gradients().data(),
                          plain.gradients().size_bytes()),
              0);
    EXPECT_TRUE(same_bits(plain.input_gradient(), seamed.input_gradient()));
  }
}

// A sage block (row means) with random per-edge values in place of its own,
// as an attention layer would compute them.
struct edge_valued_case {
  aggregation_block block;
  std::vector<float> edge_values;
  matrix x;
};

edge_valued_case random_edge_valued_case(std::mt19937_64& gen) {
  auto block = testing::random_blocks(gen, {40, 17}, layer_kind::sage, 6).front();
  std::uniform_real_distribution<float> value(-1.0f, 1.0f);
  std::vector<float> edge_values(block.forward.indices.size());
  for (float& v : edge_values) v = value(gen);
  return {std::move(block), std::move(edge_values), testing::random_matrix(gen, 40, 5)};
}

TEST(Aggregation, EdgeValuesTakeThePlaceOfTheBlocksOwn) {
  std::mt19937_64 gen(12);
  const auto c = random_edge_valued_case(gen);
  csr_matrix weighted = c.block.forward;
  weighted.values.assign(c.edge_values.begin(), c.edge_values.end());
  matrix expected(17, 5);
  kernels::spmm(testing::cpu_exec, weighted.view(), c.x.view(), expected.view());
  matrix out(17, 5);
  local_aggregation local;
  local.forward_with_edge_values(testing::cpu_exec, 0, c.block, c.edge_values, c.x.view(),
                                 out.view());
  EXPECT_TRUE(same_bits(expected.view(), out.view()));
  EXPECT_THROW(
      local.forward_with_edge_values(testing::cpu_exec, 0, c.block,
                                     std::span(c.edge_values).first(3), c.x.view(), out.view()),
      option_error);
}

// L = Σ w ⊙ (B_v·x) is linear in v and in x, so central differences are exact
// but for rounding: both gradients must match them closely.
TEST(Aggregation, EdgeValueGradientsAreThoseOfTheLoss) {
  std::mt19937_64 gen(13);
  auto c = random_edge_valued_case(gen);
  const auto w = testing::random_matrix(gen, 17, 5);
  local_aggregation local;
  const auto loss = [&] {
    matrix out(17, 5);
    local.forward_with_edge_values(testing::cpu_exec, 0, c.block, c.edge_values, c.x.view(),
                                   out.view());
    return testing::projection(out.view(), w);
  };
  matrix grad_x(40, 5);
  std::vector<float> grad_values(c.edge_values.size());
  local.backward_with_edge_values(testing::cpu_exec, 0, c.block, c.edge_values, c.x.view(),
                                  w.view(), grad_x.view(), grad_values);
  const testing::gradient_tolerance tolerance{.step = 0.25, .relative = 1e-4, .absolute = 1e-5};
  testing::expect_gradient_matches(
      testing::check_gradient(c.edge_values, grad_values,
                              testing::sample_indices(gen, grad_values.size(), 60), loss,
                              tolerance),
      "edge values");
  testing::expect_gradient_matches(
      testing::check_gradient(c.x.data(), grad_x.data(),
                              testing::sample_indices(gen, grad_x.data().size(), 60), loss,
                              tolerance),
      "x");
}

TEST(Aggregation, EdgeValuesAreTheSameBitsOnEveryHostBackEnd) {
  std::mt19937_64 gen(14);
  const auto c = random_edge_valued_case(gen);
  const auto w = testing::random_matrix(gen, 17, 5);
  const auto run = [&](const executor& exec) {
    matrix out(17, 5);
    matrix grad_x(40, 5);
    std::vector<float> grad_values(c.edge_values.size());
    local_aggregation local;
    local.forward_with_edge_values(exec, 0, c.block, c.edge_values, c.x.view(), out.view());
    local.backward_with_edge_values(exec, 0, c.block, c.edge_values, c.x.view(), w.view(),
                                    grad_x.view(), grad_values);
    std::vector<float> all(out.data().begin(), out.data().end());
    all.insert(all.end(), grad_x.data().begin(), grad_x.data().end());
    all.insert(all.end(), grad_values.begin(), grad_values.end());
    return all;
  };
  const auto reference = run(executor{backend::reference});
  for (const int threads : {1, 3}) {
    const auto cpu = run(executor{backend::cpu, threads});
    ASSERT_EQ(reference.size(), cpu.size());
    EXPECT_EQ(std::memcmp(reference.data(), cpu.data(), cpu.size() * sizeof(float)), 0)
        << threads << " threads";
  }
}

TEST(Aggregation, AnAggregationWithoutEdgeValuesRefusesThemByName) {
  std::mt19937_64 gen(15);
  auto c = random_edge_valued_case(gen);
  counting_aggregation counter;  // overrides forward and backward only
  matrix out(17, 5);
  try {
    counter.forward_with_edge_values(testing::cpu_exec, 0, c.block, c.edge_values, c.x.view(),
                                     out.view());
    FAIL() << "accepted";
  } catch (const option_error& e) {
    EXPECT_NE(std::string(e.what()).find("forward_with_edge_values"), std::string::npos)
        << e.what();
  }
  matrix grad_x(40, 5);
  std::vector<float> grad_values(c.edge_values.size());
  EXPECT_THROW(
      counter.backward_with_edge_values(testing::cpu_exec, 0, c.block, c.edge_values, c.x.view(),
                                        out.view(), grad_x.view(), grad_values),
      option_error);
}

}  // namespace
}  // namespace bulkgnn::trainer
