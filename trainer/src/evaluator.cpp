#include "evaluator.hpp"

#include "bulkgnn/core/error.hpp"
#include "bulkgnn/core/timer.hpp"
#include "bulkgnn/kernels/loss.hpp"
#include "bulkgnn/kernels/spmm.hpp"
#include "bulkgnn/trainer/placement.hpp"

#include <algorithm>

namespace bulkgnn::trainer::detail {

evaluator::evaluator(const training_data& ds, const train_options& o, const model_config& config,
                     const data::split& split, const loader::row_normalizer* normalizer,
                     const evaluation_plan& plan)
    : ds_(ds),
      options_(o),
      config_(config),
      split_(split),
      valid_labels_(labels_of(ds, split.valid, "valid")),
      test_labels_(labels_of(ds, split.test, "test")),
      valid_(model_executor(o), split.valid, valid_labels_),
      test_(model_executor(o), split.test, test_labels_),
      normalizer_(normalizer),
      plan_(plan) {
  // Refused before the first epoch rather than after it.
  if (o.eval == evaluation::full && o.eval_every > 0 && plan.route != evaluation_route::shares)
    BULKGNN_EXPECTS(ds.whole,
                    "train_options.eval: full-graph evaluation that is not by shares (a GPU "
                    "model's, or minibatch_sources.evaluation's) reads the whole graph and every "
                    "feature row, which a rank of a partitioned dataset does not hold; use "
                    "sampled evaluation");
}

void evaluator::evaluate(epoch_record& r, gnn_model& model, const minibatch_sources& sources) {
  const stopwatch watch;
  if (options_.eval == evaluation::full && plan_.route == evaluation_route::shares) {
    // predict_share reads fetched feature rows where ranks fetch them; a
    // dataset without features (a learned table's) has no fetcher.
    BULKGNN_ASSERT(config_.embedding_rows == 0 || options_.parallel->features == nullptr);
    const auto logits = predict_share(model, {.parallel = options_.parallel,
                                              .graph = ds_.graph,
                                              .features = whole_graph_inputs(model, ds_.features),
                                              .normalizer = normalizer_,
                                              .num_vertices = ds_.num_nodes});
    r.valid_acc = share_accuracy(model.exec(), logits.view(), split_.valid, valid_labels_);
    r.test_acc = share_accuracy(model.exec(), logits.view(), split_.test, test_labels_);
  } else if (options_.eval == evaluation::full && plan_.route == evaluation_route::pieces) {
    const inference_inputs inputs{.graph = ds_.graph,
                                  .features = whole_graph_inputs(model, ds_.features),
                                  .normalizer = normalizer_,
                                  .num_vertices = ds_.num_nodes};
    if (!pieces_) pieces_.emplace(inputs, config_.kind, plan_.piece_rows);
    const auto logits = pieces_->predict(model, inputs);
    const executor host;
    r.valid_acc =
        accuracy_of(host, logits.view(), placed_labels(host, split_.valid, valid_labels_));
    r.test_acc = accuracy_of(host, logits.view(), placed_labels(host, split_.test, test_labels_));
  } else if (options_.eval == evaluation::full) {
    const executor& exec = model.exec();
    if (!full_block_)
      full_block_ = full_graph_block(
          exec, sources.device_graph.rows > 0 ? sources.device_graph : ds_.graph, config_.kind);
    const auto logits = predict_full_graph(model, *full_block_,
                                           config_.embedding_rows > 0 ? model.embedding()
                                           : sources.device_features.rows > 0
                                               ? sources.device_features
                                               : features_.view(exec, ds_.features, normalizer_));
    r.valid_acc = accuracy_of(exec, logits.view(), valid_);
    r.test_acc = accuracy_of(exec, logits.view(), test_);
    features_.release_host_copy();
  } else {
    r.valid_acc = sampled_accuracy(model, sources, split_.valid, valid_epoch_base + r.epoch);
    r.test_acc = sampled_accuracy(model, sources, split_.test, test_epoch_base + r.epoch);
  }
  r.eval_seconds = watch.seconds();
}

std::optional<double> evaluator::share_accuracy(const executor& exec,
                                                dense_view<const float> share_logits,
                                                std::span<const vertex_t> vertices,
                                                std::span<const std::int32_t> labels) const {
  if (vertices.empty()) return std::nullopt;
  auto& ranks = *options_.parallel->ranks;
  const auto share = share_of_rank(ds_.num_nodes, ranks.rank(), ranks.size());
  std::vector<vertex_t> rows;
  std::vector<std::int32_t> their_labels;
  for (std::size_t i = 0; i < vertices.size(); ++i)
    if (vertices[i] >= share.first && vertices[i] < share.last) {
      rows.push_back(vertices[i] - share.first);
      their_labels.push_back(labels[i]);
    }
  matrix selected(static_cast<std::int64_t>(rows.size()), share_logits.cols, exec.memory());
  kernels::gather_dense_rows(exec, share_logits, rows, selected.view());
  double counts[2] = {
      static_cast<double>(kernels::count_correct(exec, selected.view(), their_labels)),
      static_cast<double>(rows.size())};
  ranks.all_reduce(std::span<double>(counts));
  return counts[0] / counts[1];
}

std::optional<double> evaluator::sampled_accuracy(gnn_model& model,
                                                  const minibatch_sources& sources,
                                                  std::span<const vertex_t> vertices,
                                                  std::int64_t key_epoch) {
  if (vertices.empty()) return std::nullopt;
  if (!eval_source_) eval_source_ = &sources.make_eval();
  auto& stream = *eval_source_;
  stream.start_epoch(vertices, static_cast<std::uint32_t>(key_epoch));
  double counts[2] = {0, 0};  // correct, seen
  while (auto mb = stream.next()) {
    if (mb->batch.seeds.empty()) continue;
    step_in_flight step(model.exec(), *mb);
    const placed_minibatch placed(model.exec(), *mb, config_.kind, false);
    const auto logits = forward_placed(model, placed, std::nullopt);
    counts[0] +=
        static_cast<double>(kernels::count_correct(model.exec(), logits, placed.labels.span()));
    counts[1] += static_cast<double>(mb->batch.labels.size());
    step.finish();
  }
  if (options_.parallel != nullptr) options_.parallel->ranks->all_reduce(std::span<double>(counts));
  return counts[0] / counts[1];
}

}  // namespace bulkgnn::trainer::detail
