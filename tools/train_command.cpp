#include "commands.hpp"
#include "distribution.hpp"
#include "full_batch_train.hpp"
#include "link_train.hpp"
#include "sampler_flags.hpp"
#include "train_memory.hpp"

#include "bulkgnn/core/atomic_file.hpp"
#include "bulkgnn/core/error.hpp"
#include "bulkgnn/core/grid.hpp"
#include "bulkgnn/core/memory.hpp"
#include "bulkgnn/core/parallel.hpp"
#include "bulkgnn/core/timer.hpp"
#include "bulkgnn/data/dataset.hpp"
#include "bulkgnn/data/partitioned_dataset.hpp"
#include "bulkgnn/kernels/gemm.hpp"
#include "bulkgnn/loader/loader.hpp"
#include "bulkgnn/session/execution.hpp"
#include "bulkgnn/session/layout.hpp"
#include "bulkgnn/session/training.hpp"
#include "bulkgnn/trainer/layer_table.hpp"
#include "bulkgnn/trainer/training_run.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <array>
#include <cstdlib>
#include <limits>
#include <map>
#include <memory>
#include <optional>

namespace bulkgnn::tools {

namespace {

struct train_config {
  std::string task = "node";
  std::string mode = "minibatch";
  std::string model;  // full-batch: gcn or sage; minibatch: from --sampler
  std::string compress = "none";
  std::string data;
  std::string split;
  sampler_flags sampler;
  std::string fanouts = "15,10,5";
  int layers = 0;
  std::int64_t hidden = 256;
  float dropout = 0.5f;
  std::string gemm;  // empty: the back end's default
  float lr = 0.003f;
  float weight_decay = 0.0f;
  std::string normalize_features = "none";
  std::int64_t batch_size = 1024;
  std::int64_t bulk = 32;
  std::int64_t bulk_queue = 2;
  std::int64_t ready_queue = 32;
  std::int64_t queue_bytes = 0;
  std::int64_t max_minibatches = 0;
  std::int64_t epochs = 20;
  std::int64_t eval_every = 1;
  std::string eval = "full";
  std::int64_t eval_piece_rows = 0;
  std::uint32_t seed = 0;
  int threads = 0;
  bool replace = false;
  std::string backend = "cpu";
  std::string sample_on = "cpu";
  std::string metrics_out;
  std::string checkpoint_dir;
  bool resume = false;
  bool quiet = false;
  session::layout_options distribution;
  // --task link
  std::string link_head = "dot";
  std::string link_split = "0.1,0.2";
  std::string link_split_dir;
  double split_negatives = 1;
  double neg_ratio = 1;
  std::string neg_mode = "binary";
  std::string neg_distribution = "uniform";
  bool strict_negatives = false;
  std::string exclude = "reverse";
  std::int64_t hits_k = 50;
  std::int64_t ranking_negatives = 100;
  std::int64_t node_embedding = 0;
  std::string select_by = "auto";
};

// --gemm: unset leaves the choice to the model (fast on a GPU, exact on the cpu).
std::optional<kernels::gemm_mode> gemm_mode_of(const std::string& flag) {
  if (flag.empty()) return std::nullopt;
  return kernels::parse_gemm_mode(flag, "--gemm");
}

// The options every rank of an MPI run must give alike, in canonical form,
// compared at start-up before any other collective (with DATA, by content,
// and the layout options). Ranks that differ in one would crash, hang or
// train different models. The rest, per_rank_train_options, only change what
// one rank prints, writes or how fast it runs. Every option is in one list or
// the other (require_every_option_decided).
std::vector<session::setting> shared_settings(const train_config& c) {
  const auto fanouts = parse_fanouts(c.fanouts);
  const auto layers = c.layers == 0 ? static_cast<int>(fanouts.size()) : c.layers;
  std::vector<session::setting> settings{
      {"command", "train"},
      {"--task", c.task},
      {"--mode", c.mode},
      {"--model", c.model},
      {"--compress", c.compress},
      {"--split", c.split},
      {"--fanouts", fmt::format("{}", fmt::join(fanouts, ","))},
      {"--layers", std::to_string(layers)},
      {"--hidden", std::to_string(c.hidden)},
      {"--dropout", fmt::format("{}", c.dropout)},
      {"--gemm", c.gemm.empty() ? "default" : c.gemm},
      {"--lr", fmt::format("{}", c.lr)},
      {"--weight-decay", fmt::format("{}", c.weight_decay)},
      {"--normalize-features", std::string(loader::feature_normalization_name(
                                   loader::parse_feature_normalization(c.normalize_features)))},
      {"--batch-size", std::to_string(c.batch_size)},
      {"--bulk", std::to_string(c.bulk)},
      {"--max-minibatches", std::to_string(c.max_minibatches)},
      {"--epochs", std::to_string(c.epochs)},
      {"--eval-every", std::to_string(c.eval_every)},
      {"--eval", c.eval},
      {"--seed", std::to_string(c.seed)},
      {"--replace", c.replace ? "yes" : "no"},
      {"--backend", c.backend},
      {"--sample-on", c.sample_on},
      {"--checkpoint-dir", c.checkpoint_dir},
      {"--resume", c.resume ? "yes" : "no"},
      {"--link-head", c.link_head},
      {"--link-split", c.link_split},
      {"--split-negatives", fmt::format("{}", c.split_negatives)},
      {"--link-split-dir", c.link_split_dir},
      {"--neg-ratio", fmt::format("{}", c.neg_ratio)},
      {"--neg-mode", c.neg_mode},
      {"--neg-distribution", c.neg_distribution},
      {"--strict-negatives", c.strict_negatives ? "yes" : "no"},
      {"--exclude", c.exclude},
      {"--hits-k", std::to_string(c.hits_k)},
      {"--ranking-negatives", std::to_string(c.ranking_negatives)},
      {"--node-embedding", std::to_string(c.node_embedding)},
      {"--select-by", c.select_by}};
  for (auto& s : sampler_settings(c.sampler)) settings.push_back(std::move(s));
  return settings;
}

// Queue depths and evaluation's pieces bound memory, not what is computed or
// communicated; a subgraph cache holds what any rank would compute alike.
constexpr std::array<std::string_view, 9> per_rank_train_options{
    "--help",  "--threads",         "--bulk-queue",  "--ready-queue",   "--queue-bytes",
    "--quiet", "--eval-piece-rows", "--metrics-out", "--subgraph-cache"};

trainer::train_options options_from(const train_config& c) {
  require_writable_directory(c.sampler.cache_dir, "--subgraph-cache");
  trainer::train_options o;
  o.sampling = {
      .kind = canonical_sampler(c.sampler),
      .fanouts = parse_fanouts(c.fanouts),
      .replacement = c.replace ? kernels::replacement::with : kernels::replacement::without,
      .seed = c.seed,
      .layers = c.layers,
      .parameters = sampler_parameters(c.sampler),
      .cache_dir = c.sampler.cache_dir};
  // Checked before anything sizes the model by its layers (the memory
  // estimate reads one frontier per layer).
  const auto hops = static_cast<int>(o.sampling.fanouts.size());
  BULKGNN_EXPECTS(
      sampler::find_sampler(o.sampling.kind).any_depth || c.layers == 0 || c.layers == hops,
      "--layers {}: the {} sampler makes one block per hop, and --fanouts {} has {}; "
      "give one fanout per layer",
      c.layers, o.sampling.kind, c.fanouts, hops);
  const auto layers = static_cast<int>(sampler::block_count(o.sampling));
  o.loading = {.batch_size = c.batch_size,
               .bulk = c.bulk,
               .bulk_queue = c.bulk_queue,
               .ready_queue = c.ready_queue,
               .queue_bytes = c.queue_bytes,
               .max_minibatches = c.max_minibatches};
  o.model = {
      .hidden = c.hidden, .layers = layers, .dropout = c.dropout, .gemm = gemm_mode_of(c.gemm)};
  if (!c.model.empty()) o.layer = trainer::find_layer(c.model, "--model").kind;
  o.optimizer = {.lr = c.lr, .weight_decay = c.weight_decay};
  o.normalize_features = loader::parse_feature_normalization(c.normalize_features);
  o.node_embedding = c.node_embedding;
  o.epochs = c.epochs;
  o.eval_every = c.eval_every;
  o.eval = trainer::parse_evaluation(c.eval);
  o.eval_piece_rows = c.eval_piece_rows;
  o.split = c.split;
  o.checkpoint_dir = c.checkpoint_dir;
  o.resume = c.resume;
  o.quiet = c.quiet;
  const auto roles = session::executors_for({.device = c.backend, .sample_on = c.sample_on});
  o.exec = roles.sample;
  o.model_exec = roles.model;
  return o;
}

// Where each stage runs and the data lives, and how ranks sum their
// gradients.
std::string placement_text(const trainer::training_data& ds, const trainer::train_options& o) {
  const auto layout = session::layout_for(ds, o);
  const auto& model = trainer::model_executor(o);
  const auto gpu = [](const executor& on) {
    return fmt::format("GPU {} ({})", on.device()->device(), on.device_name());
  };
  std::string text;
  if (layout.sample_on_gpu) {
    text = fmt::format(
        "sampling, gathering and training on {}, the sampler and the model each on a stream "
        "of its own; graph in {} memory, features in {} memory (device memory when they fit "
        "in half and a quarter of the GPU's)",
        gpu(o.exec), memory_space_name(layout.graph), memory_space_name(layout.features));
  } else if (layout.host_to_device) {
    text = fmt::format(
        "sampling and gathering on the {}, training on {}; minibatches copied to the GPU by "
        "the host_to_device stage",
        backend_name(o.exec.kind()), gpu(model));
  } else {
    return fmt::format("sampling, gathering and training on the {}", backend_name(o.exec.kind()));
  }
  if (o.eval == trainer::evaluation::full && o.eval_every > 0 && ds.whole)
    text += layout.evaluation.route == trainer::evaluation_route::pieces
                ? fmt::format(
                      "; full-graph evaluation layer by layer in pieces of {} vertices "
                      "(the graph or the features do not fit in device memory)",
                      layout.evaluation.piece_rows)
                : std::string("; full-graph evaluation on the GPU at once");
  if (session::world_size() > 1)
    text += o.parallel != nullptr && o.parallel->device_gradients != nullptr
                ? fmt::format("; gradients summed over {} on the GPUs",
                              o.parallel->device_gradients->name())
                : std::string(
                      "; gradients summed over MPI through host memory (NCCL needs "
                      "every rank on a GPU of its own, and a build with NCCL)");
  if (o.parallel != nullptr && o.parallel->features != nullptr)
    text += layout.features_between_gpus
                ? "; remote feature rows moved GPU to GPU over NCCL (ids over MPI)"
                : "; remote feature rows fetched over MPI through host memory";
  return text;
}

void print_epoch(const trainer::epoch_record& r, std::int64_t epochs) {
  fmt::print("epoch {:>3}/{}  loss {:.4f}  train {:.4f}  valid {}  test {}  {:.2f} s", r.epoch + 1,
             epochs, r.loss, r.train_acc, accuracy_text(r.valid_acc), accuracy_text(r.test_acc),
             r.seconds);
  if (r.valid_acc) fmt::print(" (+{:.2f} s eval)", r.eval_seconds);
  print_pipeline_stages(r.pipeline);
  fmt::print("  gemm {:.1f} GFLOP/s  peak RSS {:.0f} MiB\n", r.gemm_gflops,
             static_cast<double>(r.peak_resident_bytes) / (1 << 20));
  std::fflush(stdout);
}

// Training time covers every epoch, those a resumed run took from its
// checkpoint included; the wall time is this process's alone.
void print_summary(const trainer::train_result& result, double wall_seconds) {
  double train_seconds = 0;
  for (const auto& r : result.epochs) train_seconds += r.seconds;
  const auto epochs = static_cast<double>(std::max<std::size_t>(1, result.epochs.size()));
  fmt::print("trained {} epochs in {:.1f} s ({:.2f} s/epoch); this run: {} epochs, {:.1f} s\n",
             result.epochs.size(), train_seconds, train_seconds / epochs, result.epochs_this_run,
             wall_seconds);
}

// MPI traffic of a run: before the first epoch (partitioning, shards, feature
// owners), then per epoch, evaluation included. Keyed by epoch number, since a
// resumed run's result starts with epochs it did not run.
struct run_traffic {
  nlohmann::json setup;
  std::map<std::int64_t, nlohmann::json> by_epoch;
  std::map<std::int64_t, nlohmann::json> feature_cache_by_epoch;
};

// `peaks`: each rank's peak resident bytes in the last epoch, once the run is done.
nlohmann::json metrics_json(const train_config& c, const trainer::train_result& result,
                            double total_seconds, nlohmann::json distributed,
                            const run_traffic& traffic, const std::vector<std::int64_t>& peaks) {
  nlohmann::json epochs = nlohmann::json::array();
  for (const auto& r : result.epochs) {
    auto record = r.to_json();
    const auto found = traffic.by_epoch.find(r.epoch);
    if (found != traffic.by_epoch.end() && !found->second.is_null())
      record["traffic"] = found->second;
    const auto cache = traffic.feature_cache_by_epoch.find(r.epoch);
    if (cache != traffic.feature_cache_by_epoch.end() && !cache->second.is_null())
      record["feature_cache"] = cache->second;
    epochs.push_back(std::move(record));
  }
  if (!distributed.is_null()) distributed["setup_traffic"] = traffic.setup;
  nlohmann::json config = result.config;
  config["data"] = c.data.empty() ? "embedded-csbm" : c.data;
  config["bulk"] = c.bulk;
  config["bulk_queue"] = c.bulk_queue;
  config["ready_queue"] = c.ready_queue;
  config["queue_bytes"] = loader::queue_bytes_of({.queue_bytes = c.queue_bytes});
  config["epochs"] = c.epochs;
  config["eval_every"] = c.eval_every;
  config["eval"] = c.eval;
  config["eval_piece_rows"] = c.eval_piece_rows;
  config["threads"] = c.threads;
  config["backend"] = c.backend;
  config["sample_on"] = c.sample_on;
  config["gemm"] = c.gemm.empty() ? "default" : c.gemm;
  config["ranks"] = session::world_size();
  config["grid"] = c.distribution.grid;
  config["replication"] = c.distribution.replication;
  config["feature_replication"] = c.distribution.feature_replication;
  config["partition"] = c.distribution.partition;
  config["draw_at"] = c.distribution.draw_at;
  config["feature_cache_mib"] = c.distribution.feature_cache_mib;
  config["feature_cache_choice"] = c.distribution.feature_cache_choice;
  const auto final_record =
      final_accuracy_json(result.best_epoch, result.best_valid_acc, result.test_acc_at_best);
  return {{"command", "train"},
          {"config", config},
          {"epochs", epochs},
          {"final", final_record},
          {"total_seconds", total_seconds},
          {"peak_resident_bytes_by_rank",
           peaks.empty() ? nlohmann::json(nullptr) : nlohmann::json(peaks)},
          {"distributed", distributed}};
}

// The minibatch options that mean nothing to full-batch training, refused
// when given, so that a run never silently ignores what it was asked.
constexpr std::array<const char*, 19> minibatch_only_options{"--sampler",
                                                             "--fanouts",
                                                             "--batch-size",
                                                             "--bulk",
                                                             "--bulk-queue",
                                                             "--ready-queue",
                                                             "--queue-bytes",
                                                             "--max-minibatches",
                                                             "--eval",
                                                             "--eval-piece-rows",
                                                             "--replace",
                                                             "--sample-on",
                                                             "--checkpoint-dir",
                                                             "--resume",
                                                             "--feature-replication",
                                                             "--feature-cache",
                                                             "--feature-cache-choice",
                                                             "--draw-at",
                                                             "--node-embedding"};

full_batch_config full_batch_config_from(const train_config& c, const CLI::App& cmd) {
  for (const char* option : minibatch_only_options)
    BULKGNN_EXPECTS(cmd.count(option) == 0, "{} applies to --mode minibatch, not full-batch",
                    option);
  if (const auto given = given_parameter_flags(c.sampler); !given.empty())
    throw option_error(
        fmt::format("{} applies to --mode minibatch, not full-batch", given.front()));
  full_batch_config f;
  f.data = c.data;
  f.split = c.split;
  f.model = c.model.empty() ? "gcn" : c.model;
  f.layers = c.layers == 0 ? 2 : c.layers;
  f.hidden = c.hidden;
  f.dropout = c.dropout;
  f.gemm = c.gemm;
  if (cmd.count("--lr") > 0) f.lr = c.lr;
  f.weight_decay = c.weight_decay;
  f.normalize_features = c.normalize_features;
  if (cmd.count("--epochs") > 0) f.epochs = c.epochs;
  f.eval_every = c.eval_every;
  f.seed = c.seed;
  f.threads = c.threads;
  f.backend = c.backend;
  f.metrics_out = c.metrics_out;
  f.quiet = c.quiet;
  f.grid = cmd.count("--grid") > 0 ? c.distribution.grid : "1d";
  f.replication = c.distribution.replication;
  f.partition = c.distribution.partition;
  f.compress = c.compress;
  f.shared = shared_settings(c);
  for (const auto& s : session::layout_settings(c.distribution)) f.shared.push_back(s);
  return f;
}

// The options of --task link, refused with --task node so that a run never
// silently ignores what it was asked.
constexpr std::array<const char*, 12> link_only_options{
    "--link-head", "--link-split", "--split-negatives",   "--link-split-dir",
    "--neg-ratio", "--neg-mode",   "--neg-distribution",  "--strict-negatives",
    "--exclude",   "--hits-k",     "--ranking-negatives", "--select-by"};

// What link training does not take: a node split, full-batch, another
// evaluation than the full graph's.
constexpr std::array<const char*, 5> node_only_options{"--split", "--compress", "--eval",
                                                       "--eval-piece-rows", "--sample-on"};

link_train_config link_train_config_from(const train_config& c, const CLI::App& cmd) {
  BULKGNN_EXPECTS(c.mode == "minibatch", "--task link trains on minibatches (--mode minibatch)");
  for (const char* option : node_only_options)
    BULKGNN_EXPECTS(cmd.count(option) == 0, "{} applies to --task node, not link", option);
  link_train_config l;
  l.data = c.data;
  l.options = options_from(c);
  l.options.quiet = c.quiet;
  for (const char* option : {"--link-split", "--split-negatives"})
    BULKGNN_EXPECTS(c.link_split_dir.empty() || cmd.count(option) == 0,
                    "{} makes a random link split; --link-split-dir reads a stored one: give "
                    "one of them",
                    option);
  l.split_dir = c.link_split_dir;
  l.ranking_negatives_given = cmd.count("--ranking-negatives") > 0;
  l.select_by = c.select_by;
  const auto [valid, test] = parse_link_split(c.link_split);
  l.split = {.valid_fraction = valid,
             .test_fraction = test,
             .negatives_per_positive = c.split_negatives,
             .seed = c.seed};
  l.plan.negatives = {.mode = sampler::parse_negative_mode(c.neg_mode),
                      .amount = c.neg_ratio,
                      .distribution = sampler::parse_negative_distribution(c.neg_distribution),
                      .strict = c.strict_negatives};
  l.plan.exclude = sampler::parse_edge_exclusion(c.exclude);
  l.plan.scoring = {.head = trainer::parse_link_head(c.link_head, "--link-head"),
                    .hits_k = c.hits_k,
                    .ranking_negatives = c.ranking_negatives};
  if (l.split_dir.empty()) {
    l.plan.scoring.source_settings["link_split"] = {valid, test};
    l.plan.scoring.source_settings["split_negatives"] = c.split_negatives;
  } else {
    l.plan.scoring.source_settings["link_split_dir"] = l.split_dir;
  }
  l.metrics_out = c.metrics_out;
  l.threads = c.threads;
  l.distribution = c.distribution;
  l.shared = shared_settings(c);
  l.settings = {{"data", c.data.empty() ? "embedded-csbm" : c.data},
                {"bulk", c.bulk},
                {"bulk_queue", c.bulk_queue},
                {"ready_queue", c.ready_queue},
                {"queue_bytes", loader::queue_bytes_of({.queue_bytes = c.queue_bytes})},
                {"epochs", c.epochs},
                {"eval_every", c.eval_every},
                {"threads", c.threads},
                {"backend", c.backend}};
  return l;
}

void run_train(const train_config& c) {
  auto options = options_from(c);
  trainer::validate(options);
  const bool rank_zero = session::world_rank() == 0;
  // Every rank checks the path it was given (rank 0 writes the metrics).
  require_writable_file(c.metrics_out, "--metrics-out");
  if (rank_zero) {
    require_writable_directory(c.checkpoint_dir, "--checkpoint-dir");
    require_output_apart_from_input(c.checkpoint_dir, "--checkpoint-dir", c.data, "DATA");
  }
  const thread_limit limit(c.threads);
  const stopwatch total;
  options.quiet = c.quiet || !rank_zero;

  // A partitioned dataset (bulkgnn partition) is read one part per rank.
  const auto data = open_run_data(c.data, c.distribution, true, options.quiet);
  const auto ds =
      data.part ? trainer::part_of_dataset(*data.part) : trainer::whole_dataset(*data.whole);
  trainer::check_trainable(ds, options);
  require_memory_for(ds, options);
  std::optional<session::run_session> session_holder;
  start_session(session_holder, data, c.distribution, true, shared_settings(c));
  auto& cluster = *session_holder;
  session::training_ranks ranks(cluster, trainer::model_executor(options));
  options.parallel = ranks.parallel();
  if (rank_zero)
    fmt::print("{}: {} vertices, {} edges, {}, {} classes; {} sampler, fanouts {}{}\n", ds.name,
               ds.num_nodes, ds.num_edges,
               model_inputs_text(ds.feature_dim, options.node_embedding), ds.num_classes,
               canonical_sampler(c.sampler), c.fanouts,
               session::world_size() > 1
                   ? fmt::format("; {} ranks, grid {}", session::world_size(), c.distribution.grid)
                   : std::string());
  if (rank_zero) fmt::print("{}\n", placement_text(ds, options));

  // Traffic is gathered collectively, so every rank builds the report.
  session::epoch_traffic meter;
  run_traffic traffic{.setup = meter.since_previous(cluster.report()),
                      .by_epoch = {},
                      .feature_cache_by_epoch = {}};
  const auto write_metrics = [&](const trainer::train_result& so_far, const nlohmann::json& report,
                                 const std::vector<std::int64_t>& peaks = {}) {
    if (!c.metrics_out.empty() && rank_zero)
      write_file_atomically(
          c.metrics_out,
          metrics_json(c, so_far, total.seconds(), report, traffic, peaks).dump(2) + "\n");
  };
  const auto result = session::train(
      ds, options, [&](const trainer::epoch_record& r, const trainer::train_result& so_far) {
        const auto report = cluster.report();
        const auto& epoch_bytes = traffic.by_epoch[r.epoch] = meter.since_previous(report);
        // A refill's traffic counts in the next epoch; after the last there is none.
        const auto& cache = traffic.feature_cache_by_epoch[r.epoch] =
            cluster.end_epoch(r.epoch + 1 < c.epochs);
        if (rank_zero) {
          print_epoch(r, c.epochs);
          print_epoch_traffic(epoch_bytes);
          print_feature_cache(cache);
        }
        write_metrics(so_far, report);
      });
  const auto report = cluster.report();
  write_metrics(result, report, cluster.gather_over_ranks(peak_resident_bytes()));
  if (!rank_zero) return;

  print_summary(result, total.seconds());
  print_traffic(report);
  if (result.best_epoch)
    fmt::print("best valid accuracy {:.4f} at epoch {}; test accuracy there {:.4f}\n",
               result.best_valid_acc, *result.best_epoch + 1, result.test_acc_at_best);
}

void add_link_options(CLI::App& cmd, train_config& c) {
  cmd.add_option("--link-head", c.link_head,
                 "--task link: how a pair's score is read from its endpoints' embeddings: dot "
                 "(their inner product) or mlp (OGB's LinkPredictor over their entrywise "
                 "product)")
      ->capture_default_str()
      ->check(one_of({"dot", "mlp"}));
  cmd.add_option("--link-split", c.link_split,
                 "--task link: VALID,TEST fractions of the edges held out by the random link "
                 "split (PyG's RandomLinkSplit, seeded by --seed)")
      ->capture_default_str();
  cmd.add_option("--link-split-dir", c.link_split_dir,
                 "--task link: read the link split stored in this directory (`bulkgnn "
                 "split-links`; Python's bulkgnn.save_link_split, OGB's ogbl-* splits "
                 "included) instead of making a random one")
      ->check(non_empty_path());
  cmd.add_option("--split-negatives", c.split_negatives,
                 "--task link: fixed negatives per held-out positive that the split draws for "
                 "valid and test (the pool Hits@K ranks against; none an edge)")
      ->capture_default_str()
      ->check(real_in({.low = 0, .high = 1000}));
  cmd.add_option("--neg-ratio", c.neg_ratio,
                 "--task link: training negatives per positive (binary: any fraction; triplet: "
                 "a whole number of corrupted tails each)")
      ->capture_default_str()
      ->check(real_in({.low = 0, .high = 1000}));
  cmd.add_option("--neg-mode", c.neg_mode,
                 "--task link: binary (pairs drawn apart, PyG's default) or triplet (each "
                 "positive's source with corrupted tails, OGB citation2's protocol)")
      ->capture_default_str()
      ->check(one_of({"binary", "triplet"}));
  cmd.add_option("--neg-distribution", c.neg_distribution,
                 "--task link: where negative endpoints come from: uniform, or degree (in "
                 "proportion to in-degree^0.75)")
      ->capture_default_str()
      ->check(one_of({"uniform", "degree"}));
  cmd.add_flag("--strict-negatives", c.strict_negatives,
               "--task link: redraw a negative that is a training edge or a loop");
  cmd.add_option("--exclude", c.exclude,
                 "--task link: which edges a minibatch leaves out of its sampled blocks: none, "
                 "self (its positives) or reverse (its positives both ways, DGL's reverse_id)")
      ->capture_default_str()
      ->check(one_of({"none", "self", "reverse"}));
  cmd.add_option("--hits-k", c.hits_k,
                 "--task link: K of Hits@K (OGB's: positives above the K-th best negative), "
                 "which picks the best epoch")
      ->capture_default_str()
      ->check(integer_in(1, max_vertices));
  cmd.add_option("--ranking-negatives", c.ranking_negatives,
                 "--task link: corrupted tails each held-out positive is ranked against for "
                 "MRR (drawn once; none an edge)")
      ->capture_default_str()
      ->check(integer_in(1, 100000));
  cmd.add_option("--select-by", c.select_by,
                 "--task link: the valid metric that picks the best epoch: hits (Hits@K), mrr, "
                 "or auto (mrr where the link split brings each held-out positive's own "
                 "negative targets, ogbl-citation2's protocol; hits otherwise)")
      ->capture_default_str()
      ->check(CLI::IsMember({"auto", "hits", "mrr"}));
}

}  // namespace

void add_train_command(CLI::App& app) {
  auto config = std::make_shared<train_config>();
  auto* cmd = app.add_subcommand("train", "Train GraphSAGE (or GCN on LADIES samples) end to end");
  cmd->add_option("DATA", config->data,
                  "native dataset directory, OGB raw directory or partitioned dataset (bulkgnn "
                  "partition; each rank reads its part) (default: embedded CSBM)")
      ->check(non_empty_path());
  cmd->add_option("--task", config->task,
                  "node (classify vertices by their labels) or link (predict edges: a random "
                  "link split of DATA's edges, link minibatches with negatives, Hits@K and MRR)")
      ->capture_default_str()
      ->check(one_of({"node", "link"}));
  cmd->add_option("--mode", config->mode,
                  fmt::format("minibatch (sampled, pipelined) or full-batch (the whole graph every "
                              "epoch, over --grid {}; defaults there: 200 epochs, lr 0.01, 2 "
                              "layers)",
                              grid_kind_names(full_batch_grids)))
      ->capture_default_str()
      ->check(one_of({"minibatch", "full-batch"}));
  cmd->add_option("--model", config->model,
                  fmt::format("the layers: {}; default: minibatch, the layer the sampler's "
                              "blocks are made for; full-batch, gcn",
                              layers_help()))
      ->check(one_of(layer_choices()));
  cmd->add_option("--compress", config->compress,
                  "full-batch on 1d or sar: compress the rows sent between ranks, none, "
                  "fixed:RATE or variable:RATE:EPOCH (RATE 2-32 halving to 1 by EPOCH)")
      ->capture_default_str();
  cmd->add_option("--split", config->split, "split to train and evaluate on (default: the first)");
  add_sampler_flags(*cmd, config->sampler);
  cmd->add_option("--fanouts", config->fanouts,
                  fanouts_help() + "; one hop per layer (shadow: the hops that reach its subgraph)")
      ->capture_default_str();
  cmd->add_option("--layers", config->layers,
                  "GNN layers (default: one per fanout; the shadow sampler takes any count, "
                  "every layer on its subgraph)")
      ->check(integer_in(1, max_layers));
  cmd->add_option("--hidden", config->hidden, "hidden width")
      ->capture_default_str()
      ->check(integer_in(1, max_width));
  cmd->add_option("--dropout", config->dropout, "dropout between layers")
      ->capture_default_str()
      ->check(real_in({.low = 0, .high = 1, .high_open = true}));
  cmd->add_option("--gemm", config->gemm,
                  "the layers' matrix products: exact (the same bits on every back end) or fast "
                  "(cuBLAS on --device cuda, rounding in its own order; the cpu has only exact); "
                  "default: fast on cuda, exact on the cpu")
      ->check(one_of({"exact", "fast"}));
  cmd->add_option("--lr", config->lr, "Adam learning rate")
      ->capture_default_str()
      ->check(real_in({.low = 0, .high = 1e6, .low_open = true}));
  cmd->add_option("--weight-decay", config->weight_decay, "Adam L2 weight decay")
      ->capture_default_str()
      ->check(real_in({.low = 0, .high = 1e6}));
  cmd->add_option("--node-embedding", config->node_embedding,
                  "on a dataset without node features: learn an input embedding of this width "
                  "per vertex (torch.nn.Embedding), trained with the model (minibatch training "
                  "on the cpu)")
      ->check(integer_in(1, 65536));
  cmd->add_option("--normalize-features", config->normalize_features,
                  "none, or row: shift features to a minimum of 0 and divide each row by its sum "
                  "(PyG's NormalizeFeatures), applied as rows are read")
      ->capture_default_str()
      ->check(one_of({"none", "row"}));
  add_batch_options(*cmd, config->batch_size, config->bulk);
  cmd->add_option("--bulk-queue", config->bulk_queue, "sampled bulks queued for the gather stage")
      ->capture_default_str()
      ->check(integer_in(1, max_queue));
  cmd->add_option("--ready-queue", config->ready_queue,
                  "gathered minibatches queued for the train step")
      ->capture_default_str()
      ->check(integer_in(1, max_queue));
  cmd->add_option("--queue-bytes", config->queue_bytes,
                  "bytes each queue after the sampler may hold (sampled bulks; gathered "
                  "minibatches with their features; on a GPU, copied ones); 0 = 1/64 of the "
                  "available memory, between "
                  "32 and 128 MiB")
      ->capture_default_str()
      ->check(integer_in(0, std::numeric_limits<std::int64_t>::max()));
  cmd->add_option("--max-minibatches", config->max_minibatches,
                  "stop each epoch after this many minibatches (0 = the whole epoch)")
      ->capture_default_str()
      ->check(integer_in(0, max_vertices));
  cmd->add_option("--epochs", config->epochs)
      ->capture_default_str()
      ->check(integer_in(1, max_epochs));
  cmd->add_option("--eval-every", config->eval_every,
                  "evaluate on valid and test every N epochs and after the last (0 = never)")
      ->capture_default_str()
      ->check(integer_in(0, max_epochs));
  cmd->add_option("--eval", config->eval,
                  "full (every vertex's whole neighbourhood, layer by layer) or sampled")
      ->capture_default_str()
      ->check(one_of({"full", "sampled"}));
  cmd->add_option("--eval-piece-rows", config->eval_piece_rows,
                  "full evaluation on a GPU: 0 evaluates the whole graph at once when it and "
                  "the features fit in device memory, else layer by layer in pieces of 65536 "
                  "vertices; N > 0 always in pieces of N (the same logits, less device memory)")
      ->capture_default_str()
      ->check(integer_in(0, max_vertices));
  cmd->add_option("--seed", config->seed, "seeds sampling, dropout and initialisation")
      ->capture_default_str()
      ->check(integer_in(0, max_seed));
  add_threads_option(*cmd, config->threads);
  cmd->add_flag("--replace", config->replace, "node-wise: draw neighbours with replacement");
  cmd->add_option("--backend,--device", config->backend,
                  "where the model trains: cpu, reference (the serial oracle) or cuda (this "
                  "rank's GPU: its local rank modulo the GPUs it sees)")
      ->capture_default_str()
      ->check(one_of({"cpu", "reference", "cuda"}));
  cmd->add_option("--sample-on", config->sample_on,
                  "with --device cuda: where sampling and the feature gather run (cpu, then a "
                  "host-to-device stage; or cuda, where the minibatches stay)")
      ->capture_default_str()
      ->check(one_of({"cpu", "cuda"}));
  cmd->add_option("--metrics-out", config->metrics_out,
                  "write the config, one record per epoch and the final accuracy as JSON")
      ->check(non_empty_path());
  cmd->add_option("--checkpoint-dir", config->checkpoint_dir,
                  "save model, optimiser and epoch here after every epoch (atomically)")
      ->check(non_empty_path());
  cmd->add_flag("--resume", config->resume,
                "continue from the checkpoint in --checkpoint-dir (an error if there is none)");
  cmd->add_flag("--quiet", config->quiet, "no progress display");
  add_link_options(*cmd, *config);
  add_distribution_options(*cmd, config->distribution, true);
  cmd->callback([config, cmd] {
    require_every_option_decided(*cmd, shared_settings(*config), per_rank_train_options);
    if (config->task == "link") {
      run_link_train(link_train_config_from(*config, *cmd));
      return;
    }
    for (const char* option : link_only_options)
      BULKGNN_EXPECTS(cmd->count(option) == 0, "{} applies to --task link, not node", option);
    if (config->mode == "full-batch") {
      run_full_batch_train(full_batch_config_from(*config, *cmd));
      return;
    }
    BULKGNN_EXPECTS(cmd->count("--compress") == 0,
                    "--compress applies to --mode full-batch (minibatch training sends features "
                    "uncompressed)");
    run_train(*config);
  });
}

}  // namespace bulkgnn::tools
