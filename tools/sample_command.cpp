#include "commands.hpp"
#include "distribution.hpp"
#include "sampler_flags.hpp"

#include "bulkgnn/core/atomic_file.hpp"
#include "bulkgnn/core/error.hpp"
#include "bulkgnn/core/memory.hpp"
#include "bulkgnn/core/parallel.hpp"
#include "bulkgnn/core/progress.hpp"
#include "bulkgnn/core/timer.hpp"
#include "bulkgnn/data/dataset.hpp"
#include "bulkgnn/data/partitioned_dataset.hpp"
#include "bulkgnn/sampler/bulk_sampler.hpp"
#include "bulkgnn/session/execution.hpp"
#include "bulkgnn/session/sampling.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <array>
#include <memory>
#include <optional>

namespace bulkgnn::tools {

namespace {

struct sample_config {
  std::string data;
  std::string split;
  sampler_flags sampler;
  std::string fanouts = "15,10,5";
  std::int64_t layers = 0;  // 0: one block per hop
  std::int64_t batch_size = 1024;
  std::int64_t bulk = 32;
  std::int64_t epochs = 1;
  std::int64_t max_minibatches = 0;
  std::uint32_t seed = 0;
  int threads = 0;
  bool replace = false;
  bool weighted = false;
  std::string backend = "cpu";
  std::string topology = "auto";
  bool gather_features = false;
  std::string features = "auto";
  double cache_fraction = 0.1;
  std::string cache_policy = "degree";
  std::string metrics_out;
  std::string dump;
  bool quiet = false;
  session::layout_options distribution;
};

// The options every rank of an MPI run must give alike, in canonical form,
// compared at start-up before any other collective (with DATA, by content,
// and the layout options). Ranks that differ in one would crash, hang or
// sample different minibatches under one digest. The rest,
// per_rank_sample_options, only change what one rank prints, writes or how
// fast it runs. Every option is in one list or the other
// (require_every_option_decided).
std::vector<session::setting> shared_settings(const sample_config& c) {
  const auto fanouts = parse_fanouts(c.fanouts);
  std::vector<session::setting> settings{{"command", "sample"},
                                         {"--split", c.split},
                                         {"--fanouts", fmt::format("{}", fmt::join(fanouts, ","))},
                                         {"--layers", std::to_string(c.layers)},
                                         {"--batch-size", std::to_string(c.batch_size)},
                                         {"--bulk", std::to_string(c.bulk)},
                                         {"--epochs", std::to_string(c.epochs)},
                                         {"--max-minibatches", std::to_string(c.max_minibatches)},
                                         {"--seed", std::to_string(c.seed)},
                                         {"--replace", c.replace ? "yes" : "no"},
                                         {"--weighted", c.weighted ? "yes" : "no"},
                                         {"--backend", c.backend}};
  for (auto& s : sampler_settings(c.sampler)) settings.push_back(std::move(s));
  return settings;
}

// --dump and --gather-features are refused under mpirun, on the rank that
// gives them. --topology and --features place data without changing what
// is drawn, and a subgraph cache holds what any rank would compute alike.
constexpr std::array<std::string_view, 11> per_rank_sample_options{
    "--help",           "--threads",      "--metrics-out",     "--dump",
    "--quiet",          "--topology",     "--gather-features", "--features",
    "--cache-fraction", "--cache-policy", "--subgraph-cache"};

nlohmann::json minibatch_json(const sampler::minibatch& mb) {
  nlohmann::json blocks = nlohmann::json::array();
  for (const auto& b : mb.blocks) {
    nlohmann::json block{
        {"num_dst", b.rows}, {"num_src", b.cols}, {"indptr", b.indptr}, {"indices", b.indices}};
    if (!b.values.empty()) block["values"] = b.values;
    blocks.push_back(std::move(block));
  }
  return {{"minibatch", mb.index},
          {"seeds", mb.seeds},
          {"labels", mb.labels},
          {"input_nodes", mb.input_nodes},
          {"blocks", std::move(blocks)}};
}

// The output paths, before anything is loaded or sampled.
void require_writable_outputs(const sample_config& c) {
  BULKGNN_EXPECTS(c.dump.empty() || session::world_size() == 1,
                  "--dump writes one file from one process; run without mpirun");
  // Every rank checks the path it was given (rank 0 writes the metrics), so
  // that no rank's output silently goes nowhere.
  require_writable_file(c.metrics_out, "--metrics-out");
  require_writable_file(c.dump, "--dump");
}

session::sampling_plan plan_of(const sample_config& c) {
  require_writable_directory(c.sampler.cache_dir, "--subgraph-cache");
  return {.split = c.split,
          .sampling = {.kind = canonical_sampler(c.sampler),
                       .fanouts = parse_fanouts(c.fanouts),
                       .replacement =
                           c.replace ? kernels::replacement::with : kernels::replacement::without,
                       .weighted = c.weighted,
                       .seed = c.seed,
                       .layers = c.layers,
                       .parameters = sampler_parameters(c.sampler),
                       .cache_dir = c.sampler.cache_dir},
          .batch_size = c.batch_size,
          .bulk = c.bulk,
          .max_minibatches = c.max_minibatches,
          .gather_features = c.gather_features,
          .placement = {.topology = c.topology,
                        .features = c.features,
                        .cache_fraction = c.cache_fraction,
                        .cache_policy = c.cache_policy}};
}

void print_placement(const session::sampling_run& run, const sample_config& c, const executor& exec,
                     const data::dataset* ds) {
  if (const auto graph = run.graph_placement())
    fmt::print("topology: {:.3g} GB in {} memory ({}){}\n", graph->bytes / 1e9,
               memory_space_name(graph->space), exec.device_name(),
               c.topology == "auto" ? ", chosen by --topology auto" : "");
  if (const auto* features = run.features())
    fmt::print("features: {:.3g} GB in {} memory, {} vertices cached in {} memory{}\n",
               static_cast<double>(ds->features().data.size_bytes()) / 1e9,
               memory_space_name(features->table_space()), features->cached_vertices(),
               memory_space_name(features->cache_space()),
               features->cached_vertices() > 0 ? fmt::format(" (by {})", c.cache_policy) : "");
}

void print_gathered(const session::sampling_run& run) {
  const auto* features = run.features();
  if (features == nullptr) return;
  const auto& gathered = run.gathered();
  fmt::print(
      "features: {} rows gathered, cache hit rate {:.1f}%, {:.4g} GB from the cache, {:.4g} GB "
      "from the table ({} memory)\n",
      gathered.rows, 100.0 * gathered.hit_rate(),
      static_cast<double>(gathered.bytes_from_cache()) / 1e9,
      static_cast<double>(gathered.bytes_from_table()) / 1e9,
      memory_space_name(features->table_space()));
}

nlohmann::json features_json(const session::sampling_run& run, const sample_config& c,
                             const stage_times& times) {
  const auto* features = run.features();
  if (features == nullptr) return nullptr;
  const auto& gathered = run.gathered();
  return {{"placement", run.feature_placement()},
          {"table_memory", memory_space_name(features->table_space())},
          {"cached_vertices", features->cached_vertices()},
          {"cache_policy", c.cache_policy},
          {"rows_gathered", gathered.rows},
          {"cache_hits", gathered.cache_hits},
          {"hit_rate", gathered.hit_rate()},
          {"bytes_from_cache", gathered.bytes_from_cache()},
          {"bytes_from_table", gathered.bytes_from_table()},
          {"seconds", times.get("gather_features")},
          // Device clocks exist for work queued on a GPU only.
          {"device_seconds", times.all().contains("gpu/gather_features")
                                 ? nlohmann::json(times.get("gpu/gather_features"))
                                 : nlohmann::json(nullptr)}};
}

void run_sample(const sample_config& c) {
  require_writable_outputs(c);
  const thread_limit limit(c.threads);
  stopwatch total;
  stage_times times;

  // A partitioned dataset (bulkgnn partition) is read one part per rank.
  session::run_data data;
  {
    scoped_stage stage(times, "load");
    data = open_run_data(c.data, c.distribution, false, c.quiet);
  }
  const auto plan = plan_of(c);
  std::optional<session::run_session> session_holder;
  start_session(session_holder, data, c.distribution, false, shared_settings(c));
  auto& cluster = *session_holder;
  const executor exec = session::single_executor(c.backend);
  session::sampling_run run(data, cluster, exec, plan);
  const int rank = session::world_rank();
  const int ranks = session::world_size();
  if (!c.quiet) print_placement(run, c, exec, data.whole ? &*data.whole : nullptr);

  std::unique_ptr<atomic_output_file> dump;
  if (!c.dump.empty()) dump = std::make_unique<atomic_output_file>(c.dump);

  std::vector<std::pair<std::int64_t, std::uint64_t>> digests;  // this rank's
  std::int64_t minibatches = 0;
  edge_t sampled_edges = 0;
  const std::int64_t per_epoch = run.minibatches_per_epoch();
  progress bar("sample", per_epoch * c.epochs, " minibatches", c.quiet || rank != 0);
  session::epoch_traffic traffic;  // per epoch, in the metrics (collective)
  const auto setup_traffic = traffic.since_previous(cluster.report());
  nlohmann::json traffic_by_epoch = nlohmann::json::array();
  for (std::int64_t epoch = 0; epoch < c.epochs; ++epoch) {
    run.start_epoch(static_cast<std::uint32_t>(epoch));
    for (std::int64_t first = 0; first < per_epoch; first += c.bulk) {
      const std::int64_t count = std::min(c.bulk, per_epoch - first);
      auto sampled = run.sample(first, count);
      sampled_edges += sampled.bulk.sampled_edges();
      digests.insert(digests.end(), sampled.digests.begin(), sampled.digests.end());
      if (dump) {
        scoped_stage stage(times, "dump");
        for (std::int64_t j = 0; j < sampled.bulk.count(); ++j)
          dump->stream() << minibatch_json(run.extract(sampled.bulk, j)).dump() << '\n';
      }
      minibatches += sampled.bulk.count();
      bar.update(first + count + epoch * per_epoch);
    }
    traffic_by_epoch.push_back(traffic.since_previous(cluster.report()));
  }
  bar.finish();
  if (dump) dump->commit();
  auto all_digests = cluster.gather_digests(digests);
  std::sort(all_digests.begin(), all_digests.end());
  sampler::run_digest digest;
  for (const auto& [id, d] : all_digests) digest.add(d);
  auto report = cluster.report();
  if (!report.is_null()) report["setup_traffic"] = setup_traffic;
  // What each rank held at its peak: with a partitioned dataset, its part.
  const auto peak_bytes_by_rank = cluster.gather_over_ranks(peak_resident_bytes());
  sampled_edges = cluster.sum_over_ranks(sampled_edges);
  const auto run_times = run.times();
  for (const auto& [stage, seconds] : run_times.all()) times.add(stage, seconds);

  const double sampling_seconds = run.sampling_seconds();
  const double edges_per_second = sampled_edges / std::max(sampling_seconds, 1e-9);
  const double minibatches_per_second = minibatches / std::max(sampling_seconds, 1e-9);
  if (rank != 0) return;
  fmt::print(
      "sampled {} minibatches, {} edges in {:.4g} s: {:.4g} minibatches/s, {:.4g} edges/s{}\n",
      minibatches, sampled_edges, sampling_seconds, minibatches_per_second, edges_per_second,
      ranks > 1 ? " (rank 0)" : "");
  for (const auto& [stage, seconds] : times.all())
    fmt::print("  {:<22} {:10.4f} s\n", stage, seconds);
  print_traffic(report);
  print_gathered(run);
  fmt::print(
      "peak resident memory: {:.0f} MiB on the largest rank{}\n",
      static_cast<double>(*std::max_element(peak_bytes_by_rank.begin(), peak_bytes_by_rank.end())) /
          (1 << 20),
      data.part ? fmt::format(", each rank reading 1 of {} parts", data.part->parts()) : "");
  fmt::print("digest {:016x}\n", digest.value());

  if (!c.metrics_out.empty()) {
    nlohmann::json metrics{
        {"command", "sample"},
        {"data", c.data},
        {"sampler", canonical_sampler(c.sampler)},
        {"fanouts", plan.sampling.fanouts},
        {"layers", sampler::block_count(plan.sampling)},
        {"batch_size", c.batch_size},
        {"bulk", c.bulk},
        {"epochs", c.epochs},
        {"seed", c.seed},
        {"threads", c.threads},
        {"backend", c.backend},
        {"device", exec.device_name()},
        {"minibatches", minibatches},
        {"sampled_edges", sampled_edges},
        {"seconds", sampling_seconds},
        {"total_seconds", total.seconds()},
        {"edges_per_second", edges_per_second},
        {"minibatches_per_second", minibatches_per_second},
        {"digest", fmt::format("{:016x}", digest.value())},
        {"stages", times.all()},
        {"ranks", ranks},
        {"grid", c.distribution.grid},
        {"replication", c.distribution.replication},
        {"partition", c.distribution.partition},
        {"draw_at", c.distribution.draw_at},
        {"partitioned_data", data.part.has_value()},
        {"peak_resident_bytes_by_rank", peak_bytes_by_rank},
        {"distributed", report},
        {"traffic_by_epoch", report.is_null() ? nlohmann::json(nullptr) : traffic_by_epoch}};
    if (run.features() != nullptr) metrics["features"] = features_json(run, c, times);
    write_file_atomically(c.metrics_out, metrics.dump(2) + "\n");
  }
}

}  // namespace

void add_sample_command(CLI::App& app) {
  auto config = std::make_shared<sample_config>();
  auto* cmd = app.add_subcommand("sample", "Sample minibatches and report throughput");
  cmd->add_option("DATA", config->data,
                  "native dataset directory, OGB raw directory or partitioned dataset (bulkgnn "
                  "partition; each rank reads its part) (default: embedded CSBM)")
      ->check(non_empty_path());
  cmd->add_option("--split", config->split,
                  "split whose training vertices are the seeds (default: the first)");
  add_sampler_flags(*cmd, config->sampler);
  cmd->add_option("--fanouts", config->fanouts, fanouts_help())->capture_default_str();
  cmd->add_option("--layers", config->layers,
                  "blocks per minibatch (default: one per fanout; the shadow sampler takes any "
                  "count, its subgraph's depth apart from its hops)")
      ->check(integer_in(1, max_layers));
  add_batch_options(*cmd, config->batch_size, config->bulk);
  cmd->add_option("--epochs", config->epochs)
      ->capture_default_str()
      ->check(integer_in(1, max_epochs));
  cmd->add_option("--max-minibatches", config->max_minibatches,
                  "stop each epoch after this many minibatches (0 = the whole epoch)")
      ->capture_default_str()
      ->check(integer_in(0, max_vertices));
  cmd->add_option("--seed", config->seed)->capture_default_str()->check(integer_in(0, max_seed));
  add_threads_option(*cmd, config->threads);
  cmd->add_flag("--replace", config->replace, "node-wise: draw neighbours with replacement");
  cmd->add_flag("--weighted", config->weighted,
                "node-wise: draw neighbours proportionally to edge weights");
  cmd->add_option("--topology", config->topology,
                  "--backend cuda: where the graph lives: device memory, pinned host memory "
                  "read through UVA, or auto (device if it fits in half the GPU's memory)")
      ->capture_default_str()
      ->check(one_of({"auto", "device", "pinned"}));
  cmd->add_flag("--gather-features", config->gather_features,
                "also gather each minibatch's input features on the executor, and report the "
                "rows, cache hit rate and bytes moved");
  cmd->add_option("--features", config->features,
                  "--device cuda: where the gathered features live: device memory, pinned host "
                  "memory read through UVA, split (pinned, with a device cache of hot vertices) "
                  "or auto (device if they fit in a quarter of the GPU's memory, else split)")
      ->capture_default_str()
      ->check(one_of({"auto", "device", "pinned", "split"}));
  cmd->add_option("--cache-fraction", config->cache_fraction,
                  "--features split: the share of vertices whose rows are cached on the device")
      ->capture_default_str()
      ->check(real_in({.low = 0, .high = 1}));
  cmd->add_option("--cache-policy", config->cache_policy,
                  "--features split: cache the vertices of highest degree, or those most often "
                  "input to a minibatch in a first pass over epoch 0 (frequency)")
      ->capture_default_str()
      ->check(one_of({"degree", "frequency"}));
  cmd->add_option(
         "--backend,--device", config->backend,
         "cpu, reference (the serial oracle) or cuda (this rank's GPU: its local rank modulo the "
         "GPUs it sees)")
      ->capture_default_str()
      ->check(one_of({"cpu", "reference", "cuda"}));
  cmd->add_option("--metrics-out", config->metrics_out, "write metrics as JSON to this file")
      ->check(non_empty_path());
  cmd->add_option("--dump", config->dump, "write every minibatch as a JSON line to this file")
      ->check(non_empty_path());
  cmd->add_flag("--quiet", config->quiet, "no progress display");
  add_distribution_options(*cmd, config->distribution, false);
  cmd->callback([config, cmd] {
    require_every_option_decided(*cmd, shared_settings(*config), per_rank_sample_options);
    run_sample(*config);
  });
}

}  // namespace bulkgnn::tools
