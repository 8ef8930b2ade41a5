#pragma once

#include "bulkgnn/core/executor.hpp"
#include "bulkgnn/data/dataset.hpp"
#include "bulkgnn/loader/feature_normalization.hpp"
#include "bulkgnn/loader/loader.hpp"
#include "bulkgnn/sampler/bulk_sampler.hpp"
#include "bulkgnn/trainer/adam.hpp"
#include "bulkgnn/trainer/data_parallel.hpp"
#include "bulkgnn/trainer/epoch_loop.hpp"
#include "bulkgnn/trainer/model.hpp"
#include "bulkgnn/trainer/training_data.hpp"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace bulkgnn::trainer {

// How valid/test accuracy is computed: layer by layer over every vertex's
// full neighbourhood (exact, as PyG's inference), or on minibatches sampled
// like the training ones.
enum class evaluation { full, sampled };

[[nodiscard]] evaluation parse_evaluation(const std::string& name);

struct train_options {
  // Sampler, loader, model and optimiser settings. The model's in_features
  // and num_classes come from the dataset, its kind from `layer`.
  sampler::sampler_options sampling;
  loader::loader_options loading;
  model_config model;
  // The model's layers (model.kind is ignored); unset: the layer the
  // sampler's blocks are made for (sampler_entry::layer: node-wise →
  // GraphSAGE, layer-wise → GCN over the LADIES weights). See layer_for.
  std::optional<layer_kind> layer;
  adam_options optimizer;
  // Applied to feature rows as they are read, in training and in evaluation.
  loader::feature_normalization normalize_features = loader::feature_normalization::none;
  // > 0: the model learns an input embedding of this width per vertex
  // (model_config.embedding_rows) in place of node features, for a dataset
  // without any (a whole dataset, a model on the host).
  std::int64_t node_embedding = 0;
  std::int64_t epochs = 20;
  std::int64_t eval_every = 1;  // 0: never evaluate
  evaluation eval = evaluation::full;
  // Full-graph evaluation on a GPU: 0 evaluates the whole graph at once when
  // the graph and the features fit in device memory, else layer by layer
  // over pieces of session::default_eval_piece_rows vertices; k > 0 always
  // goes in pieces of k (predict_in_pieces). Host models ignore it.
  std::int64_t eval_piece_rows = 0;
  std::string split;
  std::filesystem::path checkpoint_dir;  // empty: no checkpoints
  bool resume = false;
  bool quiet = false;
  // Where the sampler and loader run.
  executor exec;
  // Where the model trains and evaluates (a cuda executor fed by host
  // minibatches, say); absent: `exec`. Minibatches are copied into its memory
  // when they are not there already.
  std::optional<executor> model_exec;
  // Data-parallel ranks (nullptr: this process alone). Only rank 0 writes
  // checkpoints; every rank ends with the same weights (checked).
  data_parallel* parallel = nullptr;
};

// Throws option_error naming the impossible option.
void validate(const train_options& options);

// What train() checks of `ds` and `options` before it trains (the options,
// features and labels to train on, the split and its labels, one fanout per
// layer, the layer against the sampler): option_error or data_error naming
// what is wrong. session::train checks first, before it builds loaders.
void check_trainable(const training_data& ds, const train_options& options);

// The layer kind a run trains: options.layer, else the one the sampler's
// blocks are made for. option_error naming train_options.layer for a layer
// that keeps a block's sampled weights (gcn, graph-conv) over any sampler but
// those whose blocks are made for it: gcn takes LADIES' and FastGCN's
// weights, graph-conv GraphSAINT's (over the whole graph the two weigh the
// adjacency differently).
[[nodiscard]] layer_kind layer_for(const train_options& options);

// options.model_exec, or options.exec when it is absent.
[[nodiscard]] const executor& model_executor(const train_options& options);

// How a run's full-graph evaluation goes (minibatch_sources::evaluation;
// session::layout_for decides it).
enum class evaluation_route {
  whole,   // every vertex at once on the model's executor
  pieces,  // layer by layer over pieces of evaluation_plan::piece_rows vertices (predict_in_pieces)
  shares,  // each data-parallel rank its share of the vertices, on the host (predict_share)
};

struct evaluation_plan {
  evaluation_route route = evaluation_route::whole;
  std::int64_t piece_rows = 0;  // with evaluation_route::pieces
};

struct epoch_record {
  std::int64_t epoch = 0;  // from 0 here; from 1 in to_json(), as the console prints it
  double loss = 0;         // mean over the epoch's minibatches
  double train_acc = 0;    // on the training minibatches, as they were trained
  std::optional<double> valid_acc;
  std::optional<double> test_acc;
  // Link prediction (train_links): train_acc is the share of scored pairs
  // on their label's side of 0, valid_acc and test_acc are OGB's Hits@hits_k
  // (which picks the best epoch unless selects_by_mrr), and these OGB's mean
  // reciprocal ranks; to_json() names them so.
  std::optional<std::int64_t> hits_k;
  std::optional<double> valid_mrr;
  std::optional<double> test_mrr;
  bool selects_by_mrr = false;  // the MRRs pick the best epoch (ogbl-citation2's protocol)
  double seconds = 0;           // training pipeline, excluding evaluation
  double eval_seconds = 0;      // evaluation
  loader::epoch_report pipeline;
  std::map<std::string, double> sampler_stages;  // inside the sample stage
  double gemm_gflops = 0;  // achieved by the train step's GEMMs (the encoder's; a link head's not)
  double gemm_seconds = 0;
  std::int64_t peak_resident_bytes = 0;

  [[nodiscard]] nlohmann::json to_json() const;
};

// With the best validation epoch (best_validation, epoch_loop.hpp).
struct train_result : best_validation {
  std::vector<epoch_record> epochs;  // every epoch, resumed ones included
  std::int64_t epochs_this_run = 0;  // trained by this call (not restored)
  std::vector<float> parameters;     // final weights (a link run's: the encoder's, then the head's)
  nlohmann::json config;             // every setting of the run
};

// Called after each epoch (for progress lines, metrics files).
using epoch_callback = std::function<void(const epoch_record&, const train_result& so_far)>;

// Where a training run takes its minibatches from.
struct minibatch_sources {
  // Started once per epoch over the training vertices.
  loader::minibatch_source& train;
  // The source of sampled evaluation, asked for at the first one (full-graph
  // evaluation needs none) and owned by the caller; its passes are over
  // every valid or test vertex.
  std::function<loader::minibatch_source&()> make_eval = {};
  // The sampler behind `train`, if any: its stage times go into
  // epoch_record::sampler_stages.
  const sampler::bulk_sampler* sampler = nullptr;
  // Each vertex's loss weight as a seed (GraphSAINT's normalisation,
  // sampler::subgraph_batches::loss_weights), by vertex id: a minibatch's
  // loss is then Σ weight·loss over its seeds; empty: the mean over them.
  std::span<const float> seed_loss_weights = {};
  // The whole graph and the (normalised) features in the model executor's
  // device memory, when the sources put them there to sample on the model's
  // GPU: full-graph evaluation reads them instead of copies of its own.
  csr_view device_graph = {};
  dense_view<const float> device_features = {};
  // The normaliser the sources apply to feature rows as they read them
  // (feature_normalizer), which evaluation applies too. Null with
  // train_options::normalize_features set: the run computes its own.
  const loader::row_normalizer* normalizer = nullptr;
  // How full-graph evaluation goes; by default every vertex at once on the
  // model's executor. session::train fills it from session::layout_for
  // (shares over several host ranks, pieces on a GPU the graph does not fit
  // or as train_options::eval_piece_rows asks); a caller with sources of its
  // own should too, or train_options::eval_piece_rows goes unheeded.
  evaluation_plan evaluation = {};
};

// The feature normaliser a run over `ds` applies
// (train_options::normalize_features); nullopt for none. Each rank of a
// whole dataset computes the factors from all rows; the ranks of a
// partitioned dataset gather them from the parts (collective over
// options.parallel's ranks).
[[nodiscard]] std::optional<loader::row_normalizer> feature_normalizer(const training_data& ds,
                                                                       const train_options& o);

// Trains a GNN on `ds` over the minibatches of `sources` (the multistage
// loaders session::train assembles, a loader of the caller's own, a device
// pipeline, a Python iterable); `options.sampling` and `options.loading`
// still name the model kind, dropout seed and the minibatch sizes the losses
// are weighted by, so they must describe how the sources draw. With a
// checkpoint directory, the full state is saved atomically after every epoch
// and `resume` continues from it bit-exactly.
[[nodiscard]] train_result train(const data::dataset& ds, const train_options& options,
                                 const minibatch_sources& sources,
                                 const epoch_callback& on_epoch = {});
[[nodiscard]] train_result train(const training_data& data, const train_options& options,
                                 const minibatch_sources& sources,
                                 const epoch_callback& on_epoch = {});

}  // namespace bulkgnn::trainer
