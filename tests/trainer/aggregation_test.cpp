#include "bulkgnn/trainer/aggregation.hpp"

#include "bulkgnn/trainer/model.hpp"
#include "test_support.hpp"

#include <gtest/gtest.h>

#include <cstring>
#include <random>

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

}  // namespace
}  // namespace bulkgnn::trainer
