// End to end: forward, loss, backward and Adam together learn a task whose
// labels follow the features.

#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "bulkgnn/kernels/loss.hpp"
#include "bulkgnn/trainer/adam.hpp"
#include "bulkgnn/trainer/model.hpp"
#include "test_support.hpp"

namespace bulkgnn::trainer {
namespace {

constexpr std::int64_t nodes = 300;
constexpr std::int64_t classes = 4;
constexpr std::int64_t features = 8;

struct synthetic_task {
  csr_matrix graph;
  matrix x;
  std::vector<std::int32_t> labels;
};

// Label v % classes; features = one-hot label + Gaussian noise; each vertex
// has 6 in-neighbours, mostly of its own class.
synthetic_task make_task() {
  std::mt19937_64 gen(42);
  synthetic_task task;
  task.graph.rows = task.graph.cols = nodes;
  task.x = matrix(nodes, features);
  std::normal_distribution<float> noise(0.0f, 0.5f);
  std::uniform_int_distribution<std::int64_t> any(0, nodes / classes - 1);
  std::bernoulli_distribution same_class(0.8);
  for (std::int64_t v = 0; v < nodes; ++v) {
    const auto label = static_cast<std::int32_t>(v % classes);
    task.labels.push_back(label);
    for (auto& f : task.x.view().row(v)) f = noise(gen);
    task.x.view().row(v)[label] += 1.0f;
    std::vector<vertex_t> in;
    for (int k = 0; k < 6; ++k) {
      const std::int64_t cls = same_class(gen) ? label : static_cast<std::int64_t>(gen() % classes);
      in.push_back(static_cast<vertex_t>(any(gen) * classes + cls));
    }
    std::sort(in.begin(), in.end());
    in.erase(std::unique(in.begin(), in.end()), in.end());
    task.graph.indices.insert(task.graph.indices.end(), in.begin(), in.end());
    task.graph.indptr.push_back(static_cast<edge_t>(task.graph.indices.size()));
  }
  return task;
}

class Learning : public ::testing::TestWithParam<layer_kind> {};

TEST_P(Learning, TwoHundredAdamStepsFitTheTrainingSet) {
  const auto task = make_task();
  const auto full = full_graph_block(testing::cpu_exec, task.graph.view(), GetParam(), true);
  const std::vector<aggregation_block> blocks(2, full);
  gnn_model model({.kind = GetParam(),
                   .in_features = features,
                   .hidden = 32,
                   .num_classes = classes,
                   .layers = 2,
                   .dropout = 0.5f},
                  1);
  adam optimiser(model.parameters().size(), {.lr = 0.01f, .weight_decay = 5e-4f});
  matrix grad(nodes, classes);
  const auto evaluate = [&] {
    const matrix logits = predict_full_graph(model, full, task.x.view());
    return kernels::softmax_cross_entropy(testing::cpu_exec, logits.view(), task.labels, {});
  };
  const double initial = evaluate().loss;
  for (std::uint32_t step = 0; step < 200; ++step) {
    const auto logits = model.forward(blocks, task.x.view(), kernels::dropout_key{1, step, 0});
    kernels::softmax_cross_entropy(testing::cpu_exec, logits, task.labels, grad.view());
    model.backward(grad.view());
    optimiser.step(model.parameters(), model.gradients());
  }
  const auto final = evaluate();
  EXPECT_GT(initial, 0.8 * std::log(static_cast<double>(classes)));
  EXPECT_LT(final.loss, 0.3 * std::log(static_cast<double>(classes)));
  EXPECT_GT(static_cast<double>(final.correct) / nodes, 0.9);
}

INSTANTIATE_TEST_SUITE_P(Kinds, Learning, ::testing::Values(layer_kind::sage, layer_kind::gcn),
                         [](const auto& info) { return layer_kind_name(info.param); });

}  // namespace
}  // namespace bulkgnn::trainer
