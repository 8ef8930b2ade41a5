#include "run_support.hpp"

#include "bulkgnn/core/error.hpp"
#include "bulkgnn/kernels/loss.hpp"
#include "bulkgnn/kernels/spmm.hpp"

namespace bulkgnn::trainer::detail {

std::vector<std::int32_t> labels_of(const training_data& ds, std::span<const vertex_t> vertices,
                                    const char* split_part) {
  std::vector<std::int32_t> labels;
  labels.reserve(vertices.size());
  for (const vertex_t v : vertices) {
    const auto label = ds.labels[v];
    BULKGNN_EXPECTS(label >= 0, "train_options.split: vertex {} of the {} set has no label", v,
                    split_part);
    labels.push_back(label);
  }
  return labels;
}

std::optional<double> accuracy_of(const executor& exec, dense_view<const float> logits_of_all,
                                  const placed_labels& set) {
  const auto vertices = set.vertices.span();
  if (vertices.empty()) return std::nullopt;
  matrix selected(static_cast<std::int64_t>(vertices.size()), logits_of_all.cols, exec.memory());
  kernels::gather_dense_rows(exec, logits_of_all, vertices, selected.view());
  return static_cast<double>(kernels::count_correct(exec, selected.view(), set.labels.span())) /
         static_cast<double>(vertices.size());
}

placed_minibatch::placed_minibatch(const executor& exec, const loader::ready_minibatch& mb,
                                   layer_kind kind, bool with_backward)
    : features(exec, mb.input_features()),
      labels(exec, std::span<const std::int32_t>(mb.batch.labels), mb.batch.labels.space()),
      row_ids(exec, std::span<const vertex_t>(mb.batch.input_nodes), mb.batch.input_nodes.space()) {
  blocks.reserve(mb.batch.blocks.size());
  for (const auto& block : mb.batch.blocks)
    blocks.push_back(make_aggregation_block(exec, block, kind, with_backward));
}

void finish_step(const executor& model_exec, const loader::ready_minibatch& mb) {
  const auto from_another_pool = [&](const auto& values) {
    return !values.empty() && !host_accessible(values.space()) &&
           &values.resource() != &model_exec.memory();
  };
  if (from_another_pool(mb.batch.input_nodes) || from_another_pool(mb.placed_features))
    model_exec.synchronize();
}

step_in_flight::~step_in_flight() {
  if (finished_) return;
  try {
    finish_step(model_exec_, mb_);
  } catch (...) {  // NOLINT(bugprone-empty-catch): the step's own error is the one to report
  }
}

void step_in_flight::finish() {
  finished_ = true;
  finish_step(model_exec_, mb_);
}

void all_reduce_gradients(const data_parallel& parallel, gnn_model& model) {
  if (host_accessible(model.space())) {
    parallel.ranks->all_reduce(model.mutable_gradients());
    return;
  }
  if (parallel.device_gradients != nullptr) {
    parallel.device_gradients->all_reduce_sum(model.mutable_gradients());
    return;
  }
  auto gradients = model.gradients_on_host();
  parallel.ranks->all_reduce(std::span<float>(gradients));
  model.set_gradients(gradients);
}

}  // namespace bulkgnn::trainer::detail
