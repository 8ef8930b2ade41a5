#include "bulkgnn/trainer/training_run.hpp"

#include "bulkgnn/core/error.hpp"
#include "bulkgnn/core/memory.hpp"
#include "bulkgnn/core/progress.hpp"
#include "bulkgnn/kernels/elementwise.hpp"
#include "bulkgnn/kernels/loss.hpp"
#include "bulkgnn/sampler/sampler_table.hpp"
#include "bulkgnn/trainer/layer_table.hpp"
#include "evaluator.hpp"
#include "run_checkpointer.hpp"
#include "run_support.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <tuple>

namespace bulkgnn::trainer {

evaluation parse_evaluation(const std::string& name) {
  if (name == "full") return evaluation::full;
  if (name == "sampled") return evaluation::sampled;
  throw option_error("train_options.eval must be full or sampled; got '" + name + "'");
}

namespace {

using detail::epoch_measurement;
using detail::fingerprint_of;
using detail::run_with_checkpoints;

// Widths beyond any embedding a graph model learns (the CLI also checks the
// table against the memory available).
constexpr std::int64_t max_node_embedding = 65536;

// The model a run over `ds` trains: its layers, sizes from the dataset.
model_config model_for(const training_data& ds, const train_options& o) {
  BULKGNN_EXPECTS(ds.num_classes > 0 && !ds.labels.empty(),
                  "{}: the dataset has no labels to train on", ds.name);
  // A part holds its own vertices' rows only; the table spans every vertex.
  BULKGNN_EXPECTS(o.node_embedding == 0 || ds.whole,
                  "train_options.node_embedding: {} is a part of a partitioned dataset, and a "
                  "learned embedding is a table over every vertex; train on the whole dataset",
                  ds.name);
  return detail::model_of(ds, o, ds.num_classes);
}

// One training run: the epoch loop over a training_state, with evaluation
// and checkpoints after epochs and the data-parallel weight check at the end.
class run {
 public:
  run(const training_data& ds, const train_options& o, const minibatch_sources& sources)
      : options_(o),
        config_(model_for(ds, o)),
        split_(ds.find_split(o.split)),
        own_normalizer_(sources.normalizer != nullptr ? std::nullopt : feature_normalizer(ds, o)),
        evaluator_(ds, o, config_, split_, normalizer(sources.normalizer), sources.evaluation),
        state_(config_, o) {
    state_.result.config = fingerprint_of(ds, o, config_, split_.name);
  }

  train_result execute(const minibatch_sources& sources, const epoch_callback& on_epoch) {
    sources_ = &sources;
    BULKGNN_EXPECTS(
        sources.seed_loss_weights.empty() || host_accessible(state_.model.exec().memory().space()),
        "trainer::train: minibatch_sources.seed_loss_weights weigh a loss computed on the host "
        "only so far; train the model on the host");
    run_with_checkpoints(
        state_, options_,
        [&](std::int64_t epoch) { return train_epoch(static_cast<std::uint32_t>(epoch)); },
        [&](epoch_record& record) { evaluator_.evaluate(record, state_.model, sources); },
        on_epoch);
    return std::move(state_.result);
  }

 private:
  // The sources' normaliser, else the run's own (if any).
  const loader::row_normalizer* normalizer(const loader::row_normalizer* given) const {
    if (given != nullptr) return given;
    return own_normalizer_ ? &*own_normalizer_ : nullptr;
  }

  epoch_record train_epoch(std::uint32_t epoch) {
    const epoch_measurement measurement(state_.model, sources_->sampler);
    auto& stream = sources_->train;
    stream.start_epoch(split_.train, epoch);
    const executor& exec = state_.model.exec();
    matrix grad(0, 0, exec.memory());
    auto r = detail::train_minibatches(
        stream, state_, options_, epoch,
        [&](const loader::ready_minibatch& mb) -> std::optional<detail::step_result> {
          const auto seeds = static_cast<std::int64_t>(mb.batch.seeds.size());
          if (seeds == 0) return std::nullopt;
          // A data-parallel slice carries its share of the whole minibatch's
          // loss (a batch of clusters holds any number of seeds).
          BULKGNN_ASSERT(mb.batch.whole_seeds >= seeds);
          double share = static_cast<double>(seeds) / static_cast<double>(mb.batch.whole_seeds);
          const detail::placed_minibatch placed(exec, mb, config_.kind, true);
          const kernels::dropout_key dropout{options_.sampling.seed, epoch,
                                             static_cast<std::uint32_t>(mb.batch.index),
                                             placed.row_ids.span()};
          const auto logits = detail::forward_placed(state_.model, placed, dropout);
          grad.reshape(logits.rows, logits.cols);
          const auto weights = seed_loss_weights(mb.batch);
          const auto loss =
              weights.empty()
                  ? kernels::softmax_cross_entropy(exec, logits, placed.labels.span(), grad.view())
                  : kernels::weighted_softmax_cross_entropy(exec, logits, placed.labels.span(),
                                                            weights, grad.view());
          if (!std::isfinite(loss.loss))
            throw error(fmt::format(
                "epoch {}, minibatch {}: the loss is {} (diverged; lower adam_options.lr)", epoch,
                mb.batch.index, loss.loss));
          // A weighted loss is a sum over the seeds: the slices' add up.
          if (!weights.empty()) share = 1.0;
          if (share != 1.0) kernels::scale(exec, grad.data(), static_cast<float>(share));
          state_.model.backward(grad.view());
          return detail::step_result{loss, share};
        });
    measurement.fill(r, stream);
    return r;
  }

  // The loss weight of each of the minibatch's seeds; empty for the mean.
  std::vector<float> seed_loss_weights(const sampler::minibatch& batch) const {
    const auto all = sources_->seed_loss_weights;
    if (all.empty()) return {};
    const auto seeds = copy_to_host(batch.seeds);
    std::vector<float> weights;
    weights.reserve(seeds.size());
    for (const vertex_t v : seeds) weights.push_back(all[static_cast<std::size_t>(v)]);
    return weights;
  }

  const train_options& options_;
  model_config config_;
  const data::split& split_;
  std::optional<loader::row_normalizer> own_normalizer_;
  detail::evaluator evaluator_;
  detail::training_state state_;
  const minibatch_sources* sources_ = nullptr;
};

}  // namespace

void validate(const train_options& o) {
  BULKGNN_EXPECTS(o.epochs > 0 && o.epochs < detail::max_epochs,
                  "train_options.epochs must be in [1, 2^30), got {}", o.epochs);
  BULKGNN_EXPECTS(o.eval_every >= 0,
                  "train_options.eval_every must be 0 (never) or positive, got {}", o.eval_every);
  BULKGNN_EXPECTS(o.node_embedding >= 0 && o.node_embedding <= max_node_embedding,
                  "train_options.node_embedding must be in [0, {}], got {}", max_node_embedding,
                  o.node_embedding);
  BULKGNN_EXPECTS(
      o.node_embedding == 0 || o.normalize_features == loader::feature_normalization::none,
      "train_options.normalize_features: a learned embedding "
      "(train_options.node_embedding) has no feature rows to normalise");
  BULKGNN_EXPECTS(o.eval_piece_rows >= 0,
                  "train_options.eval_piece_rows must be 0 (automatic) or positive, got {}",
                  o.eval_piece_rows);
  BULKGNN_EXPECTS(!o.resume || !o.checkpoint_dir.empty(),
                  "train_options.resume needs train_options.checkpoint_dir");
  BULKGNN_EXPECTS(o.parallel == nullptr || o.parallel->ranks != nullptr,
                  "trainer::train: parallel.ranks must be set for a data-parallel run");
  const auto& sampler = sampler::find_sampler(o.sampling.kind);
  BULKGNN_EXPECTS(!sampler.draws_subgraphs || o.eval != evaluation::sampled || o.eval_every == 0,
                  "train_options.eval sampled: the {} sampler's minibatches are drawn subgraphs, "
                  "which do not pass over every vertex once; evaluate on the full graph",
                  sampler.name);
  BULKGNN_EXPECTS(!sampler.draws_subgraphs || host_accessible(model_executor(o).memory().space()),
                  "execution_options.device: the {} sampler's normalised loss is computed on the "
                  "host only so far; train the model on the host",
                  sampler.name);
  loader::validate(o.loading);
  validate(o.optimizer);
}

layer_kind layer_for(const train_options& o) {
  const auto& blocks_for =
      find_layer(sampler::find_sampler(o.sampling.kind).layer, "sampler_entry.layer");
  if (!o.layer) return blocks_for.kind;
  const auto& layer = find_layer(*o.layer);
  // A layer that keeps a sampler's weights keeps them for the layer they were
  // computed for: over the whole graph (evaluation) each weighs the adjacency
  // its own way (LADIES' D̃⁻¹(A+I) with self loops, GraphSAINT's mean without).
  const auto& sampler = sampler::find_sampler(o.sampling.kind);
  BULKGNN_EXPECTS(
      layer.sampled_block != adjacency_weights::as_sampled || layer.kind == blocks_for.kind,
      "train_options.layer {}: the layer keeps the weights a sampler computes for it, but the "
      "{} sampler's blocks are {} (train {} layers{})",
      layer.name, sampler.name,
      blocks_for.sampled_block == adjacency_weights::as_sampled
          ? fmt::format("made for {} layers", blocks_for.name)
          : std::string("patterns"),
      blocks_for.name == "sage" ? std::string("sage") : fmt::format("{} or sage", blocks_for.name),
      layer.kind == layer_kind::gcn ? ", or sample with ladies or fastgcn"
                                    : ", or sample with a saint-* sampler");
  return layer.kind;
}

const executor& model_executor(const train_options& o) {
  return o.model_exec ? *o.model_exec : o.exec;
}

nlohmann::json epoch_record::to_json() const {
  nlohmann::json stages = nlohmann::json::object();
  for (const auto& s : pipeline.stages)
    stages[s.name] = {{"busy", s.busy_seconds},
                      {"input_wait", s.input_wait_seconds},
                      {"output_wait", s.output_wait_seconds},
                      {"items", s.items},
                      {"peak_output_bytes", s.peak_output_bytes}};
  const auto optional_value = [](const std::optional<double>& v) {
    return v ? nlohmann::json(*v) : nlohmann::json(nullptr);
  };
  nlohmann::json record = {{"epoch", epoch + 1},  // from 1, as the console counts
                           {"loss", loss},
                           {"train_acc", train_acc}};
  if (hits_k) {
    record["hits_k"] = *hits_k;
    record[fmt::format("valid_hits@{}", *hits_k)] = optional_value(valid_acc);
    record[fmt::format("test_hits@{}", *hits_k)] = optional_value(test_acc);
    record["valid_mrr"] = optional_value(valid_mrr);
    record["test_mrr"] = optional_value(test_mrr);
    if (selects_by_mrr) record["selected_by"] = "mrr";
  } else {
    record["valid_acc"] = optional_value(valid_acc);
    record["test_acc"] = optional_value(test_acc);
  }
  record.update(
      nlohmann::json{{"seconds", seconds},
                     {"eval_seconds", eval_seconds},
                     {"overlap_ratio", pipeline.stages.empty() ? 0.0 : pipeline.overlap_ratio()},
                     {"stages", stages},
                     {"sampler_stages", sampler_stages},
                     {"gemm_seconds", gemm_seconds},
                     {"gemm_gflops", gemm_gflops},
                     {"peak_resident_bytes", peak_resident_bytes}});
  return record;
}

std::optional<loader::row_normalizer> feature_normalizer(const training_data& ds,
                                                         const train_options& o) {
  if (o.normalize_features == loader::feature_normalization::none) return std::nullopt;
  if (ds.whole) return loader::row_normalizer(ds.features);
  BULKGNN_EXPECTS(o.parallel != nullptr && ds.normalizer_of_parts,
                  "train_options.normalize_features: a part of a partitioned dataset needs the "
                  "other ranks to compute the factors");
  return ds.normalizer_of_parts(*o.parallel->ranks);
}

void check_trainable(const training_data& ds, const train_options& o) {
  validate(o);
  std::ignore = model_for(ds, o);
  // Training minibatches carry their own labels; this only rejects unlabelled seeds.
  std::ignore = detail::labels_of(ds, ds.find_split(o.split).train, "train");
}

train_result train(const data::dataset& ds, const train_options& options,
                   const minibatch_sources& sources, const epoch_callback& on_epoch) {
  return train(whole_dataset(ds), options, sources, on_epoch);
}

train_result train(const training_data& ds, const train_options& options,
                   const minibatch_sources& sources, const epoch_callback& on_epoch) {
  check_trainable(ds, options);
  BULKGNN_EXPECTS(
      options.eval != evaluation::sampled || options.eval_every == 0 || sources.make_eval,
      "trainer::train: sampled evaluation needs minibatch_sources.make_eval");
  BULKGNN_EXPECTS(sources.normalizer == nullptr ||
                      options.normalize_features != loader::feature_normalization::none,
                  "trainer::train: minibatch_sources.normalizer is set but "
                  "train_options.normalize_features is none");
  BULKGNN_EXPECTS(
      sources.evaluation.route != evaluation_route::pieces || sources.evaluation.piece_rows > 0,
      "trainer::train: evaluation in pieces of {} vertices", sources.evaluation.piece_rows);
  BULKGNN_EXPECTS(
      sources.evaluation.route != evaluation_route::shares || options.parallel != nullptr,
      "trainer::train: evaluation by shares needs data-parallel ranks");
  run r(ds, options, sources);
  return r.execute(sources, on_epoch);
}

}  // namespace bulkgnn::trainer
