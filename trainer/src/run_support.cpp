#include "run_support.hpp"

#include "bulkgnn/core/error.hpp"
#include "bulkgnn/core/memory.hpp"
#include "bulkgnn/kernels/loss.hpp"
#include "bulkgnn/kernels/spmm.hpp"
#include "bulkgnn/sampler/sampler_table.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstdlib>

namespace bulkgnn::trainer::detail {

namespace {

// A float setting as the decimal the user typed (0.003, not the
// 0.003000000026077032 that widening the float gives): the shortest text
// that reads back as the same float.
double as_typed(float value) { return std::strtod(fmt::format("{}", value).c_str(), nullptr); }

}  // namespace

nlohmann::json fingerprint_of(const training_data& ds, const train_options& o,
                              const model_config& model, const std::string& split) {
  nlohmann::json print = {
      {"dataset", ds.name},
      {"num_nodes", ds.num_nodes},
      {"num_edges", ds.num_edges},
      {"split", split},
      {"sampler", std::string(sampler::find_sampler(o.sampling.kind).name)},
      {"fanouts", o.sampling.fanouts},
      {"replace", o.sampling.replacement == kernels::replacement::with},
      {"weighted", o.sampling.weighted},
      {"seed", o.sampling.seed},
      {"batch_size", o.loading.batch_size},
      {"max_minibatches", o.loading.max_minibatches},
      {"model", layer_kind_name(model.kind)},
      {"in_features", model.in_features},
      {"num_classes", model.num_classes},
      {"layers", model.layers},
      {"hidden", model.hidden},
      {"dropout", as_typed(model.dropout)},
      {"lr", as_typed(o.optimizer.lr)},
      {"weight_decay", as_typed(o.optimizer.weight_decay)},
      {"normalize_features", loader::feature_normalization_name(o.normalize_features)}};
  // Only where there is one, so that earlier checkpoints still resume.
  if (o.node_embedding > 0) print["node_embedding"] = o.node_embedding;
  // A sampler's own parameters, defaults filled in (a sampler without any
  // adds nothing, so its earlier checkpoints still resume).
  const auto& entry = sampler::find_sampler(o.sampling.kind);
  if (!entry.parameters.empty()) {
    nlohmann::json parameters = nlohmann::json::object();
    for (const auto& p : entry.parameters)
      parameters[std::string(p.name)] = sampler::parameter(o.sampling, p.name);
    print["sampler_parameters"] = std::move(parameters);
  }
  return print;
}

matrix normalized_copy(dense_view<const float> features, const loader::row_normalizer& normalizer) {
  matrix normalized(features.rows, features.cols);
  std::copy(features.data.begin(), features.data.end(), normalized.data().begin());
  normalizer.apply_to_all(normalized.view());
  return normalized;
}

epoch_record record_of(std::uint32_t epoch, std::span<double, 3> sums, std::int64_t minibatches,
                       const data_parallel* parallel) {
  if (parallel != nullptr) parallel->ranks->all_reduce(std::span<double>(sums));
  epoch_record r;
  r.epoch = epoch;
  r.loss = minibatches > 0 ? sums[0] / static_cast<double>(minibatches) : 0;
  r.train_acc = sums[2] > 0 ? sums[1] / sums[2] : 0;
  return r;
}

model_config model_of(const training_data& ds, const train_options& o, std::int64_t outputs) {
  auto config = o.model;
  config.kind = layer_for(o);
  if (o.node_embedding > 0) {
    BULKGNN_EXPECTS(ds.feature_dim == 0,
                    "train_options.node_embedding: {} has {} node features, which the model reads; "
                    "learned embeddings replace features only on a dataset without them",
                    ds.name, ds.feature_dim);
    config.in_features = o.node_embedding;
    config.embedding_rows = ds.num_nodes;
  } else {
    BULKGNN_EXPECTS(ds.feature_dim > 0, "{}: the dataset has no node features to train on ({})",
                    ds.name,
                    ds.whole && host_accessible(model_executor(o).memory().space())
                        ? "learn an embedding per vertex instead: train_options.node_embedding"
                        : "an embedding per vertex, train_options.node_embedding, is learned "
                          "over a whole dataset by a model on the host");
    config.in_features = ds.feature_dim;
  }
  config.num_classes = outputs;
  BULKGNN_EXPECTS(sampler::block_count(o.sampling) == config.layers,
                  "the {} sampler's minibatches hold {} blocks but model_config.layers is {}; "
                  "give one fanout per layer (or sampler_options.layers where the sampler takes "
                  "it)",
                  o.sampling.kind, sampler::block_count(o.sampling), config.layers);
  validate(config);
  return config;
}

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

dense_view<const float> forward_placed(gnn_model& model, const placed_minibatch& mb,
                                       std::optional<kernels::dropout_key> dropout) {
  if (model.config().embedding_rows > 0)
    return model.forward_embedded(mb.blocks, mb.row_ids.span(), dropout);
  return model.forward(mb.blocks, mb.features.view(), dropout);
}

dense_view<const float> whole_graph_inputs(const gnn_model& model,
                                           dense_view<const float> features) {
  return model.config().embedding_rows > 0 ? model.embedding() : features;
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

dense_view<const float> evaluation_features::view(const executor& exec,
                                                  dense_view<const float> features,
                                                  const loader::row_normalizer* normalizer) {
  if (placed_) return placed_->view();
  if (normalizer != nullptr) {
    normalized_ = normalized_copy(features, *normalizer);
    features = normalized_->view();
  }
  if (!needs_placing(exec, features.space)) return features;
  placed_.emplace(exec, features);
  normalized_.reset();
  return placed_->view();
}

void all_reduce_gradients(const data_parallel& parallel, const executor& exec,
                          std::span<float> gradients) {
  if (host_accessible(exec.memory().space())) {
    parallel.ranks->all_reduce(gradients);
    return;
  }
  if (parallel.device_gradients != nullptr) {
    parallel.device_gradients->all_reduce_sum(gradients);
    return;
  }
  std::vector<float> on_host(gradients.size());
  exec.memory().copy(on_host.data(), gradients.data(), gradients.size_bytes());
  parallel.ranks->all_reduce(std::span<float>(on_host));
  exec.memory().copy(gradients.data(), on_host.data(), gradients.size_bytes());
}

epoch_measurement::epoch_measurement(const gnn_model& model, const sampler::bulk_sampler* sampler)
    : model_(model),
      sampler_(sampler),
      gemm_before_(model.gemm()),
      sampler_before_(sampler_times()) {
  reset_peak_resident_bytes();
}

std::map<std::string, double> epoch_measurement::sampler_times() const {
  if (sampler_ == nullptr) return {};
  return sampler_->times().all();
}

void epoch_measurement::fill(epoch_record& r, const loader::minibatch_source& stream) const {
  r.pipeline = stream.report();
  r.seconds = r.pipeline.seconds;
  for (const auto& [stage, seconds] : sampler_times()) {
    const auto before = sampler_before_.find(stage);
    r.sampler_stages[stage] = seconds - (before == sampler_before_.end() ? 0 : before->second);
  }
  const auto& gemm = model_.gemm();
  r.gemm_seconds = gemm.seconds - gemm_before_.seconds;
  r.gemm_gflops = r.gemm_seconds > 0 ? (gemm.flops - gemm_before_.flops) / r.gemm_seconds / 1e9 : 0;
  r.peak_resident_bytes = peak_resident_bytes();
}

}  // namespace bulkgnn::trainer::detail
