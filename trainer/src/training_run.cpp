#include "bulkgnn/trainer/training_run.hpp"

#include "bulkgnn/core/error.hpp"
#include "bulkgnn/core/memory.hpp"
#include "bulkgnn/core/progress.hpp"
#include "bulkgnn/core/timer.hpp"
#include "bulkgnn/kernels/devices.hpp"
#include "bulkgnn/kernels/elementwise.hpp"
#include "bulkgnn/kernels/loss.hpp"
#include "bulkgnn/kernels/spmm.hpp"
#include "bulkgnn/loader/host_to_device.hpp"
#include "bulkgnn/trainer/checkpoint.hpp"
#include "bulkgnn/trainer/layers.hpp"
#include "bulkgnn/trainer/placement.hpp"
#include "bulkgnn/trainer/share_inference.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <tuple>

namespace bulkgnn::trainer {

evaluation parse_evaluation(const std::string& name) {
  if (name == "full") return evaluation::full;
  if (name == "sampled") return evaluation::sampled;
  throw option_error("train_options.eval must be full or sampled; got '" + name + "'");
}

namespace {

// Evaluation streams are keyed on epochs that training never uses (training
// epochs stay below 2^30), so they never repeat a training sample.
constexpr std::uint32_t valid_epoch_base = 0x80000000u;
constexpr std::uint32_t test_epoch_base = 0xC0000000u;
constexpr std::int64_t max_epochs = std::int64_t{1} << 30;

// The layer the sampler's blocks are made for (its table entry says).
layer_kind layer_kind_for(const std::string& sampler_name) {
  return parse_layer_kind(std::string(sampler::find_sampler(sampler_name).layer));
}

// A float setting as the decimal the user typed (0.003, not the
// 0.003000000026077032 that widening the float gives): the shortest text
// that reads back as the same float.
double as_typed(float value) { return std::strtod(fmt::format("{}", value).c_str(), nullptr); }

nlohmann::json fingerprint_of(const training_data& ds, const train_options& o,
                              const model_config& model, const std::string& split) {
  return {{"dataset", ds.name},
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
}

// The labels of `vertices`; option_error if one has none (-1).
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

// Host arrays of vertices and labels, as the model's executor reads them.
struct placed_labels {
  placed_labels(const executor& exec, std::span<const vertex_t> v, std::span<const std::int32_t> l)
      : vertices(exec, v, memory_space::host), labels(exec, l, memory_space::host) {}

  placed<vertex_t> vertices;
  placed<std::int32_t> labels;
};

// `logits_of_all` and `set` are in the memory of `exec`, the model's executor.
std::optional<double> accuracy_of(const executor& exec, dense_view<const float> logits_of_all,
                                  const placed_labels& set) {
  const auto vertices = set.vertices.span();
  if (vertices.empty()) return std::nullopt;
  matrix selected(static_cast<std::int64_t>(vertices.size()), logits_of_all.cols, exec.memory());
  kernels::gather_dense_rows(exec, logits_of_all, vertices, selected.view());
  return static_cast<double>(kernels::count_correct(exec, selected.view(), set.labels.span())) /
         static_cast<double>(vertices.size());
}

// A minibatch's arrays where the model's executor reads them: copies in
// device memory for a GPU, the loader's own buffers on the host.
struct placed_minibatch {
  placed_minibatch(const executor& exec, const loader::ready_minibatch& mb, layer_kind kind,
                   bool with_backward)
      : features(exec, mb.input_features()),
        labels(exec, std::span<const std::int32_t>(mb.batch.labels), mb.batch.labels.space()),
        row_ids(exec, std::span<const vertex_t>(mb.batch.input_nodes),
                mb.batch.input_nodes.space()) {
    blocks.reserve(mb.batch.blocks.size());
    for (const auto& block : mb.batch.blocks)
      blocks.push_back(make_aggregation_block(exec, block, kind, with_backward));
  }

  std::vector<aggregation_block> blocks;
  placed_matrix features;
  placed<std::int32_t> labels;
  placed<vertex_t> row_ids;
};

// A minibatch's buffers may come from another stream (the host-to-device
// stage's, or the GPU-to-GPU feature fetch's), which frees them as soon as
// the minibatch is dropped: the model's stream must be done with them first.
void finish_step(const executor& model_exec, const loader::ready_minibatch& mb) {
  const auto from_another_pool = [&](const auto& values) {
    return !values.empty() && !host_accessible(values.space()) &&
           &values.resource() != &model_exec.memory();
  };
  if (from_another_pool(mb.batch.input_nodes) || from_another_pool(mb.placed_features))
    model_exec.device()->synchronize();
}

// Sums the gradients over data-parallel ranks: on the device where a device
// reducer is given, else over the ranks' communicator, through host memory
// when the model's are elsewhere.
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

// The loaders train() builds when the caller brings no minibatch source:
// the multistage loader over the dataset, data-parallel ranks each loading
// their slice of every minibatch.
class own_loaders {
 public:
  own_loaders(const training_data& ds, const train_options& o,
              const loader::row_normalizer* normalizer)
      : ds_(ds),
        options_(o),
        normalizer_(normalizer),
        device_copies_(device_copies_for(ds, o, normalizer)),
        sampler_(sampler_for()),
        loader_(source(), *sampler_, loading_for(o, o.loading), o.exec) {
    if (features_between_gpus(o)) {
      // A stream of its own: the gather stage fetches while the model trains.
      const auto fetch_exec = kernels::make_cuda_executor(model_executor(o).device()->device());
      const bool placed = o.parallel->features->place_on_device(fetch_exec, normalizer);
      BULKGNN_EXPECTS(placed, "train: the feature fetcher cannot move rows between GPUs");
    }
  }

  [[nodiscard]] minibatch_sources sources() {
    minibatch_sources s{
        .train = loader_,
        .make_eval = [this]() -> loader::minibatch_source& { return eval_loader(); },
        .sampler = &*sampler_};
    // Copies in device memory serve evaluation on the same GPU too (they
    // are complete: copying into device memory waits for the copy).
    const auto& model = model_executor(options_);
    if (device_copies_ && model.device() != nullptr &&
        model.device()->device() == options_.exec.device()->device() &&
        device_copies_->graph.space() == memory_space::device &&
        device_copies_->features.space() == memory_space::device) {
      s.device_graph = device_copies_->graph.view();
      s.device_features = {ds_.features.rows, ds_.features.cols,
                           std::span<const float>(device_copies_->features), memory_space::device};
    }
    return s;
  }

 private:
  // Every valid/test vertex, whatever --max-minibatches limits training to.
  loader::minibatch_source& eval_loader() {
    if (!eval_loader_) {
      auto options = options_.loading;
      options.max_minibatches = 0;
      eval_sampler_ = sampler_for();
      eval_loader_.emplace(source(), *eval_sampler_, loading_for(options_, options), options_.exec);
    }
    return *eval_loader_;
  }

  // The graph and the (normalised) features where sampling and gathering on
  // a GPU read them (gpu_placement_for); the host stages read the dataset in
  // place.
  struct device_copies {
    csr_matrix graph;
    buffer<float> features;
  };

  static std::optional<device_copies> device_copies_for(const training_data& ds,
                                                        const train_options& o,
                                                        const loader::row_normalizer* normalizer) {
    if (o.exec.device() == nullptr) return std::nullopt;
    BULKGNN_EXPECTS(o.parallel == nullptr,
                    "train_options.exec: sampling on the GPU under mpirun is not supported yet "
                    "(sample on the cpu: --sample-on cpu)");
    BULKGNN_EXPECTS(ds.whole,
                    "train_options.exec: sampling on the GPU reads the whole graph, which a rank "
                    "of a partitioned dataset does not hold");
    const auto placement = gpu_placement_for(ds, o.exec);
    const auto resource = [&](memory_space space) -> memory_resource& {
      return space == memory_space::device ? o.exec.memory() : o.exec.device()->pinned_memory();
    };
    device_copies copies;
    copies.graph = copy_to(ds.graph, resource(placement.graph));
    if (normalizer == nullptr) {
      copies.features = copy_to(ds.features.data, resource(placement.features));
    } else {
      matrix normalized(ds.features.rows, ds.features.cols);
      std::copy(ds.features.data.begin(), ds.features.data.end(), normalized.data().begin());
      normalizer->apply_to_all(normalized.view());
      copies.features =
          copy_to(std::span<const float>(normalized.data()), resource(placement.features));
    }
    return copies;
  }

  // A sharded graph's rows come through the data-parallel row source.
  std::unique_ptr<sampler::bulk_sampler> sampler_for() const {
    const auto& o = options_;
    if (o.parallel != nullptr && o.parallel->rows != nullptr)
      return std::make_unique<sampler::bulk_sampler>(*o.parallel->rows, o.sampling, o.exec);
    return std::make_unique<sampler::bulk_sampler>(
        device_copies_ ? device_copies_->graph.view() : ds_.graph, o.sampling, o.exec);
  }

  loader::graph_source source() const {
    if (device_copies_)
      return {.graph = device_copies_->graph.view(),
              .features = {ds_.features.rows, ds_.features.cols,
                           std::span<const float>(device_copies_->features),
                           device_copies_->features.space()},
              .labels = ds_.labels};
    if (options_.parallel == nullptr)
      return {.graph = ds_.graph,
              .features = ds_.features,
              .labels = ds_.labels,
              .normalizer = normalizer_};
    auto* remote = options_.parallel->features;
    return {.graph = ds_.graph,
            .features = remote ? dense_view<const float>{} : ds_.features,
            .labels = ds_.labels,
            .rows = options_.parallel->rows,
            .remote_features = remote,
            .normalizer = normalizer_};
  }

  static loader::loader_options loading_for(const train_options& o, loader::loader_options l) {
    add_host_to_device(o, l);
    if (o.parallel == nullptr) return l;
    l.slice = o.parallel->ranks->rank();
    l.slices = o.parallel->ranks->size();
    l.split_ranks = o.parallel->sampling;
    l.on_failure = o.parallel->abort_all;
    return l;
  }

  // A model on a GPU fed by host stages gets its minibatches copied by a
  // stage of their own, on a stream of its own on that GPU, so that the
  // copies overlap the train step; the gather writes the features into
  // pinned buffers, which that stage copies by DMA. The stage's function
  // keeps the copy executor (and its pinned memory) alive with the loader.
  static void add_host_to_device(const train_options& o, loader::loader_options& l) {
    const auto* device = model_executor(o).device();
    if (device == nullptr || o.exec.device() != nullptr) return;
    const auto copy_exec = kernels::make_cuda_executor(device->device());
    l.feature_memory = &copy_exec.device()->pinned_memory();
    l.host_to_device = [copy_exec] { return loader::make_host_to_device_stage(copy_exec); };
  }

  const training_data& ds_;
  const train_options& options_;
  const loader::row_normalizer* normalizer_;
  std::optional<device_copies> device_copies_;
  std::unique_ptr<sampler::bulk_sampler> sampler_;
  loader::minibatch_loader loader_;
  std::unique_ptr<sampler::bulk_sampler> eval_sampler_;
  std::optional<loader::minibatch_loader> eval_loader_;
};

// What a run trains and has recorded: the model, its optimiser and every
// epoch so far (resumed ones included), as records and as saved history.
struct training_state {
  training_state(const model_config& config, const train_options& o)
      : model(config, o.sampling.seed, model_executor(o)),
        optimizer(model.parameters().size(), o.optimizer, model_executor(o)) {}

  // Appends an epoch; `as_saved` is its history entry when it comes from a
  // checkpoint (kept as written there).
  void add_record(epoch_record record, std::optional<nlohmann::json> as_saved = std::nullopt) {
    history.push_back(as_saved ? std::move(*as_saved) : record.to_json());
    result.epochs.push_back(std::move(record));
  }

  gnn_model model;
  adam optimizer;
  nlohmann::json history = nlohmann::json::array();
  train_result result;
};

// Valid and test accuracy of a model after an epoch: over the full graph,
// or over minibatches from the evaluation source (all reduced over
// data-parallel ranks).
class evaluator {
 public:
  evaluator(const training_data& ds, const train_options& o, const model_config& config,
            const data::split& split, const loader::row_normalizer* normalizer)
      : ds_(ds),
        options_(o),
        config_(config),
        split_(split),
        valid_labels_(labels_of(ds, split.valid, "valid")),
        test_labels_(labels_of(ds, split.test, "test")),
        valid_(model_executor(o), split.valid, valid_labels_),
        test_(model_executor(o), split.test, test_labels_),
        normalizer_(normalizer) {
    // Refused before the first epoch rather than after it.
    if (o.eval == evaluation::full && o.eval_every > 0 && !by_shares()) {
      BULKGNN_EXPECTS(ds.whole,
                      "train_options.eval: full-graph evaluation on a GPU reads the whole graph "
                      "and every feature row, which a rank of a partitioned dataset does not "
                      "hold; use sampled evaluation");
      piece_rows_ = eval_piece_rows_for(ds, o);
    }
  }

  void evaluate(epoch_record& r, gnn_model& model, const minibatch_sources& sources) {
    const stopwatch watch;
    if (options_.eval == evaluation::full && by_shares()) {
      const auto logits = predict_share(model, {.parallel = options_.parallel,
                                                .graph = ds_.graph,
                                                .features = ds_.features,
                                                .normalizer = normalizer_,
                                                .num_vertices = ds_.num_nodes});
      r.valid_acc = share_accuracy(model.exec(), logits.view(), split_.valid, valid_labels_);
      r.test_acc = share_accuracy(model.exec(), logits.view(), split_.test, test_labels_);
    } else if (options_.eval == evaluation::full && piece_rows_ > 0) {
      const inference_inputs inputs{.graph = ds_.graph,
                                    .features = ds_.features,
                                    .normalizer = normalizer_,
                                    .num_vertices = ds_.num_nodes};
      if (!pieces_) pieces_.emplace(inputs, config_.kind, piece_rows_);
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
      const auto logits = predict_full_graph(
          model, *full_block_,
          sources.device_features.rows > 0 ? sources.device_features : features_for(exec));
      r.valid_acc = accuracy_of(exec, logits.view(), valid_);
      r.test_acc = accuracy_of(exec, logits.view(), test_);
      normalized_features_.reset();
    } else {
      r.valid_acc = sampled_accuracy(model, sources, split_.valid, valid_epoch_base + r.epoch);
      r.test_acc = sampled_accuracy(model, sources, split_.test, test_epoch_base + r.epoch);
    }
    r.eval_seconds = watch.seconds();
  }

 private:
  // Several data-parallel ranks on the host evaluate the full graph by shares
  // (predict_share); a GPU model evaluates it whole on every rank.
  [[nodiscard]] bool by_shares() const {
    return options_.parallel != nullptr && options_.parallel->ranks->size() > 1 &&
           model_executor(options_).device() == nullptr;
  }

  // Accuracy over `vertices` whose logits this rank's share holds, summed over
  // the ranks (collective); absent for no vertices.
  std::optional<double> share_accuracy(const executor& exec, dense_view<const float> share_logits,
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

  // A normalised copy of every feature row for one full-graph evaluation
  // (whose first layer aggregates a matrix of the same size anyway).
  matrix normalized_features() const {
    const auto features = ds_.features;
    matrix normalized(features.rows, features.cols);
    std::copy(features.data.begin(), features.data.end(), normalized.data().begin());
    normalizer_->apply_to_all(normalized.view());
    return normalized;
  }

  // Every (normalised) feature row where the model reads it. A copy in
  // device memory stays for later evaluations; a normalised host copy lives
  // for one (evaluate() drops it), as it would only add to the epochs' peak.
  dense_view<const float> features_for(const executor& exec) {
    if (placed_features_) return placed_features_->view();
    dense_view<const float> host = ds_.features;
    if (normalizer_ != nullptr) {
      normalized_features_ = normalized_features();
      host = normalized_features_->view();
    }
    if (!needs_placing(exec, host.space)) return host;
    placed_features_.emplace(exec, host);
    normalized_features_.reset();
    return placed_features_->view();
  }

  // Every valid/test vertex, whatever --max-minibatches limits training to.
  std::optional<double> sampled_accuracy(gnn_model& model, const minibatch_sources& sources,
                                         std::span<const vertex_t> vertices,
                                         std::int64_t key_epoch) {
    if (vertices.empty()) return std::nullopt;
    if (!eval_source_) eval_source_ = &sources.make_eval();
    auto& stream = *eval_source_;
    stream.start_epoch(vertices, static_cast<std::uint32_t>(key_epoch));
    double counts[2] = {0, 0};  // correct, seen
    while (auto mb = stream.next()) {
      if (mb->batch.seeds.empty()) continue;
      const placed_minibatch placed(model.exec(), *mb, config_.kind, false);
      const auto logits = model.forward(placed.blocks, placed.features.view(), std::nullopt);
      counts[0] +=
          static_cast<double>(kernels::count_correct(model.exec(), logits, placed.labels.span()));
      counts[1] += static_cast<double>(mb->batch.labels.size());
      finish_step(model.exec(), *mb);
    }
    if (options_.parallel != nullptr)
      options_.parallel->ranks->all_reduce(std::span<double>(counts));
    return counts[0] / counts[1];
  }

  const training_data& ds_;
  const train_options& options_;
  const model_config& config_;
  const data::split& split_;
  std::vector<std::int32_t> valid_labels_;
  std::vector<std::int32_t> test_labels_;
  placed_labels valid_;
  placed_labels test_;
  const loader::row_normalizer* normalizer_;
  std::optional<aggregation_block> full_block_;
  // Vertices per piece of a full-graph evaluation on a GPU; 0: all at once.
  std::int64_t piece_rows_ = 0;
  // Every (normalised) feature row where the model reads it, kept across
  // evaluations when that took a copy.
  std::optional<matrix> normalized_features_;
  std::optional<placed_matrix> placed_features_;
  std::optional<inference_pieces> pieces_;  // built at the first evaluation in pieces
  loader::minibatch_source* eval_source_ = nullptr;
};

// Saves a training_state after every epoch (rank 0) and restores it on
// resume, bit-exactly, in the run's checkpoint directory.
class checkpointer {
 public:
  explicit checkpointer(const train_options& o) : options_(o) {}

  // A fresh run must not overwrite a checkpoint it was not asked to resume.
  void check_fresh() const {
    if (!options_.checkpoint_dir.empty() && !options_.resume &&
        std::filesystem::exists(checkpoint_path(options_.checkpoint_dir)))
      throw option_error(
          fmt::format("train_options.checkpoint_dir: {} already holds a checkpoint; pass "
                      "train_options.resume to continue it, or "
                      "remove it to start afresh",
                      checkpoint_path(options_.checkpoint_dir).string()));
  }

  void save(const training_state& state, std::int64_t epochs_done) const {
    checkpoint c;
    c.fingerprint = state.result.config;
    c.epochs_done = epochs_done;
    c.optimizer_steps = state.optimizer.steps();
    c.parameters = state.model.parameters_on_host();
    c.first_moment = state.optimizer.first_moment_on_host();
    c.second_moment = state.optimizer.second_moment_on_host();
    c.history = state.history;
    save_checkpoint(options_.checkpoint_dir, c);
  }

  // Loads the checkpoint and returns the first epoch still to train.
  std::int64_t restore(training_state& state) const {
    const auto file = checkpoint_path(options_.checkpoint_dir);
    auto c = load_checkpoint(options_.checkpoint_dir);
    if (!c)
      throw option_error(fmt::format("train_options.resume: no checkpoint at {}", file.string()));
    check_fingerprint(c->fingerprint, state.result.config, file);
    if (c->epochs_done <= 0 || c->epochs_done > options_.epochs)
      throw option_error(
          fmt::format("train_options.resume: {} holds {} trained epochs; train_options.epochs must "
                      "be at least that (it is {})",
                      file.string(), c->epochs_done, options_.epochs));
    const auto parameter_count = state.model.parameters().size();
    if (c->parameters.size() != parameter_count)
      throw data_error(file.string(), fmt::format("holds {} parameters, the model has {}",
                                                  c->parameters.size(), parameter_count));
    state.model.set_parameters(c->parameters);
    state.optimizer.set_moments(c->first_moment, c->second_moment);
    state.optimizer.set_steps(c->optimizer_steps);
    if (!c->history.is_array() || c->history.size() != static_cast<std::size_t>(c->epochs_done))
      throw data_error(file.string(), "checkpoint history does not match its epoch count");
    try {
      for (const auto& h : c->history) {
        auto record = epoch_record_from_json(h);
        state.result.offer(record.epoch, record.valid_acc, record.test_acc);
        state.add_record(std::move(record), h);
      }
    } catch (const nlohmann::json::exception& e) {
      throw data_error(file.string(), fmt::format("malformed checkpoint history: {}", e.what()));
    }
    return c->epochs_done;
  }

 private:
  static epoch_record epoch_record_from_json(const nlohmann::json& j) {
    epoch_record r;
    r.epoch = j.at("epoch").get<std::int64_t>() - 1;  // counted from 1, as to_json writes
    r.loss = j.at("loss").get<double>();
    r.train_acc = j.at("train_acc").get<double>();
    if (!j.at("valid_acc").is_null()) r.valid_acc = j.at("valid_acc").get<double>();
    if (!j.at("test_acc").is_null()) r.test_acc = j.at("test_acc").get<double>();
    r.seconds = j.at("seconds").get<double>();
    r.eval_seconds = j.value("eval_seconds", 0.0);
    return r;
  }

  const train_options& options_;
};

// One training run: the epoch loop over a training_state, with evaluation
// and checkpoints after epochs and the data-parallel weight check at the end.
class run {
 public:
  run(const training_data& ds, const train_options& o)
      : ds_(ds),
        options_(o),
        config_(model_for(ds, o)),
        split_(ds.find_split(o.split)),
        normalizer_(normalizer_for(ds, o)),
        evaluator_(ds, o, config_, split_, normalizer()),
        state_(config_, o),
        checkpointer_(o) {
    // Training minibatches carry their own labels; this only rejects unlabelled seeds.
    std::ignore = labels_of(ds, split_.train, "train");
    state_.result.config = fingerprint_of(ds, o, config_, split_.name);
  }

  [[nodiscard]] const loader::row_normalizer* normalizer() const {
    return normalizer_ ? &*normalizer_ : nullptr;
  }

  train_result execute(const minibatch_sources& sources, const epoch_callback& on_epoch) {
    sources_ = &sources;
    checkpointer_.check_fresh();
    std::int64_t first_epoch = 0;
    if (options_.resume) first_epoch = checkpointer_.restore(state_);
    run_epochs(
        first_epoch, options_.epochs, options_.eval_every, state_.result,
        [&](std::int64_t epoch) { return train_epoch(static_cast<std::uint32_t>(epoch)); },
        [&](epoch_record& record) { evaluator_.evaluate(record, state_.model, sources); },
        [&](epoch_record record) {
          const auto epoch = record.epoch;
          state_.add_record(std::move(record));
          ++state_.result.epochs_this_run;
          if (!options_.checkpoint_dir.empty() && is_rank_zero())
            checkpointer_.save(state_, epoch + 1);
          if (on_epoch) on_epoch(state_.result.epochs.back(), state_.result);
        });
    state_.result.parameters = state_.model.parameters_on_host();
    if (options_.parallel != nullptr)
      require_same_weights(*options_.parallel->ranks, state_.result.parameters,
                           "data-parallel training");
    return std::move(state_.result);
  }

 private:
  // Each rank of a whole dataset computes the same factors from all rows,
  // whichever rows it owns; the ranks of a partitioned dataset gather them
  // from the parts.
  static std::optional<loader::row_normalizer> normalizer_for(const training_data& ds,
                                                              const train_options& o) {
    if (o.normalize_features == loader::feature_normalization::none) return std::nullopt;
    if (ds.whole) return loader::row_normalizer(ds.features);
    BULKGNN_EXPECTS(o.parallel != nullptr && ds.normalizer_of_parts,
                    "train_options.normalize_features: a part of a partitioned dataset needs the "
                    "other ranks to compute the factors");
    return ds.normalizer_of_parts(*o.parallel->ranks);
  }

  // Seeds of minibatch `index` of an epoch over `seeds` vertices.
  std::int64_t minibatch_seeds(std::int64_t seeds, std::int64_t index) const {
    return std::min(options_.loading.batch_size, seeds - index * options_.loading.batch_size);
  }

  std::map<std::string, double> sampler_times() const {
    if (sources_->sampler == nullptr) return {};
    return sources_->sampler->times().all();
  }

  bool is_rank_zero() const {
    return options_.parallel == nullptr || options_.parallel->ranks->rank() == 0;
  }

  static model_config model_for(const training_data& ds, const train_options& o) {
    BULKGNN_EXPECTS(ds.feature_dim > 0, "{}: the dataset has no node features to train on",
                    ds.name);
    BULKGNN_EXPECTS(ds.num_classes > 0 && !ds.labels.empty(),
                    "{}: the dataset has no labels to train on", ds.name);
    auto config = o.model;
    config.kind = layer_kind_for(o.sampling.kind);
    config.in_features = ds.feature_dim;
    config.num_classes = ds.num_classes;
    BULKGNN_EXPECTS(static_cast<std::int64_t>(o.sampling.fanouts.size()) == config.layers,
                    "sampler_options.fanouts has {} hops but model_config.layers is {}; give one "
                    "fanout per layer",
                    o.sampling.fanouts.size(), config.layers);
    validate(config);
    return config;
  }

  epoch_record train_epoch(std::uint32_t epoch) {
    reset_peak_resident_bytes();
    const gemm_stats gemm_before = state_.model.gemm();
    // Read before the stages start: the sample stage adds to these times.
    const auto sampler_before = sampler_times();
    auto& stream = sources_->train;
    stream.start_epoch(split_.train, epoch);
    progress bar(fmt::format("epoch {}/{}", epoch + 1, options_.epochs), stream.num_minibatches(),
                 " minibatches", options_.quiet);

    // Sums over this rank's slices: loss weighted by the slice's share of its
    // minibatch, correct predictions, seeds.
    double metrics[3] = {0, 0, 0};
    std::int64_t minibatches = 0;
    const auto train_seeds = static_cast<std::int64_t>(split_.train.size());
    const executor& exec = state_.model.exec();
    matrix grad(0, 0, exec.memory());
    while (auto mb = stream.next()) {
      const auto seeds = static_cast<std::int64_t>(mb->batch.seeds.size());
      const double share = static_cast<double>(seeds) /
                           static_cast<double>(minibatch_seeds(train_seeds, mb->batch.index));
      if (seeds > 0) {
        const placed_minibatch placed(exec, *mb, config_.kind, true);
        const auto logits =
            state_.model.forward(placed.blocks, placed.features.view(),
                                 kernels::dropout_key{options_.sampling.seed, epoch,
                                                      static_cast<std::uint32_t>(mb->batch.index),
                                                      placed.row_ids.span()});
        grad.reshape(logits.rows, logits.cols);
        const auto loss =
            kernels::softmax_cross_entropy(exec, logits, placed.labels.span(), grad.view());
        if (!std::isfinite(loss.loss))
          throw error(fmt::format(
              "epoch {}, minibatch {}: the loss is {} (diverged; lower adam_options.lr)", epoch,
              mb->batch.index, loss.loss));
        if (share != 1.0) kernels::scale(exec, grad.data(), static_cast<float>(share));
        state_.model.backward(grad.view());
        metrics[0] += loss.loss * share;
        metrics[1] += static_cast<double>(loss.correct);
        metrics[2] += static_cast<double>(loss.count);
      } else {
        kernels::fill(exec, state_.model.mutable_gradients(), 0.0f);
      }
      if (options_.parallel != nullptr) all_reduce_gradients(*options_.parallel, state_.model);
      state_.optimizer.step(state_.model.parameters(), state_.model.gradients());
      finish_step(exec, *mb);
      bar.update(++minibatches);
    }
    if (options_.parallel != nullptr)
      options_.parallel->ranks->all_reduce(std::span<double>(metrics));
    bar.finish();

    epoch_record r;
    r.epoch = epoch;
    r.loss = minibatches > 0 ? metrics[0] / static_cast<double>(minibatches) : 0;
    r.train_acc = metrics[2] > 0 ? metrics[1] / metrics[2] : 0;
    r.pipeline = stream.report();
    r.seconds = r.pipeline.seconds;
    for (const auto& [stage, seconds] : sampler_times()) {
      const auto before = sampler_before.find(stage);
      r.sampler_stages[stage] = seconds - (before == sampler_before.end() ? 0 : before->second);
    }
    r.gemm_seconds = state_.model.gemm().seconds - gemm_before.seconds;
    r.gemm_gflops = r.gemm_seconds > 0
                        ? (state_.model.gemm().flops - gemm_before.flops) / r.gemm_seconds / 1e9
                        : 0;
    r.peak_resident_bytes = peak_resident_bytes();
    return r;
  }

  const training_data& ds_;
  const train_options& options_;
  model_config config_;
  const data::split& split_;
  std::optional<loader::row_normalizer> normalizer_;
  evaluator evaluator_;
  training_state state_;
  checkpointer checkpointer_;
  const minibatch_sources* sources_ = nullptr;
};

}  // namespace

void validate(const train_options& o) {
  BULKGNN_EXPECTS(o.epochs > 0 && o.epochs < max_epochs,
                  "train_options.epochs must be in [1, 2^30), got {}", o.epochs);
  BULKGNN_EXPECTS(o.eval_every >= 0,
                  "train_options.eval_every must be 0 (never) or positive, got {}", o.eval_every);
  BULKGNN_EXPECTS(o.eval_piece_rows >= 0,
                  "train_options.eval_piece_rows must be 0 (automatic) or positive, got {}",
                  o.eval_piece_rows);
  BULKGNN_EXPECTS(!o.resume || !o.checkpoint_dir.empty(),
                  "train_options.resume needs train_options.checkpoint_dir");
  BULKGNN_EXPECTS(o.parallel == nullptr || o.parallel->ranks != nullptr,
                  "trainer::train: parallel.ranks must be set for a data-parallel run");
  loader::validate(o.loading);
  validate(o.optimizer);
}

gpu_placement gpu_placement_for(const training_data& ds, const executor& exec) {
  BULKGNN_EXPECTS(exec.device() != nullptr, "gpu_placement_for: a {} executor has no GPU",
                  backend_name(exec.kind()));
  BULKGNN_EXPECTS(ds.whole, "gpu_placement_for: {} is a part of a partitioned dataset", ds.name);
  const auto device_bytes =
      static_cast<double>(kernels::visible_cuda_devices()
                              .at(static_cast<std::size_t>(exec.device()->device()))
                              .memory_bytes);
  const auto graph = ds.graph;
  const double graph_bytes =
      static_cast<double>(graph.indptr.size_bytes() + graph.indices.size_bytes());
  const auto feature_bytes = static_cast<double>(ds.features.data.size_bytes());
  return {
      .graph = graph_bytes <= device_bytes / 2 ? memory_space::device : memory_space::pinned_host,
      .features =
          feature_bytes <= device_bytes / 4 ? memory_space::device : memory_space::pinned_host};
}

std::int64_t eval_piece_rows_for(const training_data& ds, const train_options& o) {
  const executor& exec = model_executor(o);
  if (exec.device() == nullptr || o.eval != evaluation::full) return 0;
  if (o.eval_piece_rows > 0) return o.eval_piece_rows;
  const auto placement = gpu_placement_for(ds, exec);
  const bool fits =
      placement.graph == memory_space::device && placement.features == memory_space::device;
  return fits ? 0 : default_eval_piece_rows;
}

const executor& model_executor(const train_options& o) {
  return o.model_exec ? *o.model_exec : o.exec;
}

bool features_between_gpus(const train_options& o) {
  return o.parallel != nullptr && o.parallel->features != nullptr &&
         o.parallel->device_gradients != nullptr && model_executor(o).device() != nullptr &&
         o.exec.device() == nullptr;
}

nlohmann::json epoch_record::to_json() const {
  nlohmann::json stages = nlohmann::json::object();
  for (const auto& s : pipeline.stages)
    stages[s.name] = {{"busy", s.busy_seconds},
                      {"input_wait", s.input_wait_seconds},
                      {"output_wait", s.output_wait_seconds},
                      {"items", s.items}};
  const auto optional_value = [](const std::optional<double>& v) {
    return v ? nlohmann::json(*v) : nlohmann::json(nullptr);
  };
  return {{"epoch", epoch + 1},  // from 1, as the console counts
          {"loss", loss},
          {"train_acc", train_acc},
          {"valid_acc", optional_value(valid_acc)},
          {"test_acc", optional_value(test_acc)},
          {"seconds", seconds},
          {"eval_seconds", eval_seconds},
          {"overlap_ratio", pipeline.stages.empty() ? 0.0 : pipeline.overlap_ratio()},
          {"stages", stages},
          {"sampler_stages", sampler_stages},
          {"gemm_seconds", gemm_seconds},
          {"gemm_gflops", gemm_gflops},
          {"peak_resident_bytes", peak_resident_bytes}};
}

train_result train(const data::dataset& ds, const train_options& options,
                   const epoch_callback& on_epoch) {
  return train(whole_dataset(ds), options, on_epoch);
}

train_result train(const data::dataset& ds, const train_options& options,
                   const minibatch_sources& sources, const epoch_callback& on_epoch) {
  return train(whole_dataset(ds), options, sources, on_epoch);
}

train_result train(const training_data& ds, const train_options& options,
                   const epoch_callback& on_epoch) {
  validate(options);
  run r(ds, options);
  own_loaders loaders(ds, options, r.normalizer());
  return r.execute(loaders.sources(), on_epoch);
}

train_result train(const training_data& ds, const train_options& options,
                   const minibatch_sources& sources, const epoch_callback& on_epoch) {
  validate(options);
  BULKGNN_EXPECTS(
      options.eval != evaluation::sampled || options.eval_every == 0 || sources.make_eval,
      "trainer::train: sampled evaluation needs minibatch_sources.make_eval");
  run r(ds, options);
  return r.execute(sources, on_epoch);
}

}  // namespace bulkgnn::trainer
