#include "commands.hpp"
#include "distribution.hpp"
#include "sampler_flags.hpp"

#include "bulkgnn/core/atomic_file.hpp"
#include "bulkgnn/core/error.hpp"
#include "bulkgnn/core/executor_stage.hpp"
#include "bulkgnn/core/memory.hpp"
#include "bulkgnn/core/parallel.hpp"
#include "bulkgnn/core/progress.hpp"
#include "bulkgnn/core/timer.hpp"
#include "bulkgnn/data/dataset.hpp"
#include "bulkgnn/data/partitioned_dataset.hpp"
#include "bulkgnn/kernels/devices.hpp"
#include "bulkgnn/loader/feature_cache.hpp"
#include "bulkgnn/sampler/bulk_sampler.hpp"
#include "bulkgnn/trainer/placement.hpp"

#include <fmt/format.h>
#include <tbb/parallel_for.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <array>
#include <cmath>
#include <memory>
#include <numeric>
#include <optional>

namespace bulkgnn::tools {

namespace {

struct sample_config {
  std::string data;
  std::string split;
  sampler_flags sampler;
  std::string fanouts = "15,10,5";
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
// is drawn.
constexpr std::array<std::string_view, 10> per_rank_sample_options{
    "--help",     "--threads",         "--metrics-out", "--dump",           "--quiet",
    "--topology", "--gather-features", "--features",    "--cache-fraction", "--cache-policy"};

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
  if (session::world_rank() != 0) return;
  require_writable_file(c.metrics_out, "--metrics-out");
  require_writable_file(c.dump, "--dump");
}

// For a cuda executor, the graph copied where its kernels read it: device
// memory when it fits in half the GPU's memory (auto), else pinned host
// memory read through UVA. Empty for the host back ends, which sample the
// dataset's own mapping.
csr_matrix place_topology(csr_view graph, const executor& exec, const std::string& topology,
                          bool weighted, bool quiet) {
  if (exec.device() == nullptr) return {};
  // The kernels trust device-resident weights, so they are checked here,
  // while the host still reads them, as sample_rows checks host graphs.
  if (weighted) {
    const auto bad = std::find_if(graph.values.begin(), graph.values.end(),
                                  [](float w) { return !(w > 0.0f && std::isfinite(w)); });
    BULKGNN_EXPECTS(bad == graph.values.end(),
                    "--weighted: weighted sampling needs positive finite edge weights, but edge "
                    "{} has weight {}",
                    bad - graph.values.begin(), bad == graph.values.end() ? 0.0f : *bad);
  }
  const auto bytes = static_cast<double>(graph.indptr.size_bytes() + graph.indices.size_bytes() +
                                         graph.values.size_bytes());
  const bool on_device =
      topology == "device" ||
      (topology == "auto" &&
       trainer::gpu_space_for(exec, bytes, trainer::graph_share_of_gpu) == memory_space::device);
  if (!quiet)
    fmt::print("topology: {:.3g} GB in {} memory ({}){}\n", bytes / 1e9,
               on_device ? "device" : "pinned host", exec.device_name(),
               topology == "auto" ? ", chosen by --topology auto" : "");
  return copy_to(graph, on_device ? exec.memory() : exec.device()->pinned_memory());
}

// How many times each vertex is an input vertex of a minibatch in the first
// epoch: the access frequency that --cache-policy frequency caches by.
std::vector<std::uint64_t> input_counts(sampler::bulk_sampler& sampler,
                                        std::span<const vertex_t> train, const sample_config& c,
                                        std::int64_t per_epoch, vertex_t num_vertices) {
  std::vector<std::uint64_t> counts(static_cast<std::size_t>(num_vertices), 0);
  const sampler::epoch_plan plan(train, c.batch_size, c.seed, 0);
  for (std::int64_t first = 0; first < per_epoch; first += c.bulk) {
    const auto bulk =
        sampler::copy_to_host(sampler.sample(plan, first, std::min(c.bulk, per_epoch - first)));
    for (const vertex_t v : bulk.layers.back().sources.vertices) ++counts[v];
  }
  return counts;
}

struct feature_placement {
  std::string where;  // device, pinned, split or host
  memory_resource* table = nullptr;
  memory_resource* cache = nullptr;
  std::int64_t cache_vertices = 0;
};

// --features for the executor: the whole table on the device when it fits
// in a quarter of the GPU's memory (auto), else pinned host memory read
// through UVA with the --cache-fraction hottest vertices' rows on the device.
feature_placement choose_feature_placement(const sample_config& c, const executor& exec,
                                           dense_view<const float> features) {
  if (exec.device() == nullptr) {
    BULKGNN_EXPECTS(c.features == "auto",
                    "--features {}: placing features applies to --device cuda only", c.features);
    return {"host", &host_memory(), &host_memory(), 0};
  }
  const auto bytes = static_cast<double>(features.data.size_bytes());
  std::string where = c.features;
  if (where == "auto")
    where =
        trainer::gpu_space_for(exec, bytes, trainer::feature_share_of_gpu) == memory_space::device
            ? "device"
            : "split";
  auto& device = exec.memory();
  auto& pinned = exec.device()->pinned_memory();
  if (where == "device") return {where, &device, &device, 0};
  if (where == "pinned") return {where, &pinned, &device, 0};
  const auto cached = static_cast<std::int64_t>(
      std::llround(c.cache_fraction * static_cast<double>(features.rows)));
  return {where, &pinned, &device, cached};
}

void run_sample(const sample_config& c) {
  require_writable_outputs(c);
  const thread_limit limit(c.threads);
  stopwatch total;
  stage_times times;

  // A partitioned dataset (bulkgnn partition) is read one part per rank.
  run_data data;
  {
    scoped_stage stage(times, "load");
    data = open_run_data(c.data, c.distribution, false, c.quiet);
  }
  const auto& ds = data.whole;
  const auto& shard = data.part;
  const auto train = shard ? shard->training_vertices(c.split) : ds->training_vertices(c.split);
  sampler::sampler_options options{
      .kind = canonical_sampler(c.sampler),
      .fanouts = parse_fanouts(c.fanouts),
      .replacement = c.replace ? kernels::replacement::with : kernels::replacement::without,
      .weighted = c.weighted,
      .seed = c.seed,
      .parameters = sampler_parameters(c.sampler)};
  std::optional<session::run_session> session_holder;
  start_session(session_holder, data, c.distribution, false, shared_settings(c));
  auto& cluster = *session_holder;
  const executor exec = session::rank_executor(parse_backend(c.backend, "--backend"), "--backend");
  BULKGNN_EXPECTS(exec.device() == nullptr || !cluster.distributed(),
                  "--backend cuda: sampling on the GPU under mpirun is not supported yet");
  BULKGNN_EXPECTS(!shard || (exec.device() == nullptr && !c.gather_features),
                  "--backend cuda and --gather-features read a whole dataset; {} is partitioned",
                  c.data);
  // Alone, a partitioned dataset has one part: the whole graph.
  const auto placed =
      shard ? csr_matrix{} : place_topology(ds->graph(), exec, c.topology, c.weighted, c.quiet);
  const csr_view graph = shard                      ? shard->rows()
                         : exec.device() != nullptr ? placed.view()
                                                    : ds->graph();
  auto sampler = cluster.rows() ? sampler::bulk_sampler(*cluster.rows(), options, exec)
                                : sampler::bulk_sampler(graph, options, exec);
  const int rank = session::world_rank();
  const int ranks = session::world_size();
  BULKGNN_EXPECTS(!c.gather_features || !cluster.distributed(),
                  "--gather-features: gathering features under mpirun is not supported yet");

  std::unique_ptr<atomic_output_file> dump;
  if (!c.dump.empty()) dump = std::make_unique<atomic_output_file>(c.dump);

  std::vector<std::pair<std::int64_t, std::uint64_t>> digests;  // this rank's
  std::int64_t minibatches = 0;
  edge_t sampled_edges = 0;
  std::int64_t per_epoch =
      sampler::minibatch_count(static_cast<std::int64_t>(train.size()), c.batch_size);
  if (c.max_minibatches > 0) per_epoch = std::min(per_epoch, c.max_minibatches);
  // On a cuda executor: each stage's time on the device (CUDA events).
  device_stage_log device_log;
  stage_times device_times;
  std::optional<loader::placed_features> features;
  feature_placement placement;
  loader::gather_tally gathered;
  const auto policy = loader::parse_cache_policy(c.cache_policy, "--cache-policy");
  if (c.gather_features) {
    scoped_stage stage(times, "place_features");
    placement = choose_feature_placement(c, exec, ds->features());
    std::vector<vertex_t> hot;
    if (placement.cache_vertices > 0)
      hot = policy == loader::cache_policy::degree
                ? loader::hottest_by_degree(ds->graph(), placement.cache_vertices)
                : loader::hottest_by_count(
                      input_counts(sampler, train, c, per_epoch, ds->num_nodes()),
                      placement.cache_vertices);
    features.emplace(ds->features(), *placement.table, hot, *placement.cache);
    if (!c.quiet)
      fmt::print("features: {:.3g} GB in {} memory, {} vertices cached in {} memory{}\n",
                 static_cast<double>(ds->features().data.size_bytes()) / 1e9,
                 memory_space_name(features->table_space()), features->cached_vertices(),
                 memory_space_name(features->cache_space()),
                 features->cached_vertices() > 0 ? fmt::format(" (by {})", c.cache_policy) : "");
  }
  progress bar("sample", per_epoch * c.epochs, " minibatches", c.quiet || rank != 0);
  stopwatch sampling_clock;
  double sampling_seconds = 0;
  // Every rank takes part in every minibatch, as data-parallel training does:
  // each step samples `bulk` minibatches, each rank its part of each
  // (bulk_sampler::sample_slices), and the digests of the whole minibatches
  // are merged from the parts' destinations, so they equal a single
  // process's for any rank count.
  const auto split = cluster.minibatch_split();
  const auto hops = static_cast<std::int64_t>(options.fanouts.size());
  session::epoch_traffic traffic;  // per epoch, in the metrics (collective)
  const auto setup_traffic = traffic.since_previous(cluster.report());
  nlohmann::json traffic_by_epoch = nlohmann::json::array();
  for (std::int64_t epoch = 0; epoch < c.epochs; ++epoch) {
    sampling_clock.restart();
    const sampler::epoch_plan plan(train, c.batch_size, c.seed, static_cast<std::uint32_t>(epoch));
    times.add("shuffle", sampling_clock.seconds());
    for (std::int64_t first = 0; first < per_epoch; first += c.bulk) {
      const std::int64_t count = std::min(c.bulk, per_epoch - first);
      sampling_clock.restart();
      auto bulk = sampler.sample_slices(plan, first, count, split);
      exec.synchronize();
      sampling_seconds += sampling_clock.seconds();
      if (features) {
        executor_stage stage(exec, times, device_log, "gather_features");
        const auto inputs = std::span<const vertex_t>(bulk.layers.back().sources.vertices);
        buffer<float> rows(inputs.size() * static_cast<std::size_t>(ds->features().cols),
                           exec.memory());
        gathered.gather(exec, *features, inputs,
                        {static_cast<std::int64_t>(inputs.size()), ds->features().cols,
                         std::span<float>(rows), rows.space()});
        exec.synchronize();
      }
      if (exec.device() != nullptr) {
        scoped_stage stage(times, "copy_to_host");
        bulk = sampler::copy_to_host(bulk);
        device_log.collect(*exec.device(), device_times);
        (void)sampler.device_times();  // collected each bulk, so the log stays short
      }
      sampled_edges += bulk.sampled_edges();
      {
        scoped_stage stage(times, "digest");
        if (!cluster.distributed()) {
          std::vector<std::uint64_t> whole(static_cast<std::size_t>(count));
          tbb::parallel_for(std::int64_t{0}, count,
                            [&](std::int64_t j) { whole[j] = bulk.digest(j); });
          for (std::int64_t j = 0; j < count; ++j)
            digests.emplace_back(epoch * per_epoch + first + j, whole[j]);
        } else {
          // Parts share destinations: merged by minibatch owner over the ranks.
          std::vector<std::vector<sampler::destination_edges>> parts(
              static_cast<std::size_t>(count));
          tbb::parallel_for(std::int64_t{0}, count,
                            [&](std::int64_t j) { parts[j] = bulk.destinations(j); });
          std::vector<sampler::destination_edges> mine;
          for (const auto& part : parts) mine.insert(mine.end(), part.begin(), part.end());
          for (const auto& [id, d] : cluster.merge_part_digests(plan, hops, mine))
            digests.emplace_back(epoch * per_epoch + id, d);
        }
      }
      if (dump) {
        scoped_stage stage(times, "dump");
        for (std::int64_t j = 0; j < bulk.count(); ++j)
          dump->stream()
              << minibatch_json(bulk.extract(j, shard ? shard->labels() : ds->labels())).dump()
              << '\n';
      }
      minibatches += bulk.count();
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
  sampling_seconds += times.get("shuffle");
  for (const auto& [stage, seconds] : sampler.times().all()) times.add("sampler/" + stage, seconds);
  for (const auto& [stage, seconds] : sampler.device_times().all())
    times.add("gpu/sampler/" + stage, seconds);
  for (const auto& [stage, seconds] : device_times.all()) times.add("gpu/" + stage, seconds);

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
  if (features)
    fmt::print(
        "features: {} rows gathered, cache hit rate {:.1f}%, {:.4g} GB from the cache, {:.4g} GB "
        "from the table ({} memory)\n",
        gathered.rows, 100.0 * gathered.hit_rate(),
        static_cast<double>(gathered.bytes_from_cache()) / 1e9,
        static_cast<double>(gathered.bytes_from_table()) / 1e9,
        memory_space_name(features->table_space()));
  fmt::print(
      "peak resident memory: {:.0f} MiB on the largest rank{}\n",
      static_cast<double>(*std::max_element(peak_bytes_by_rank.begin(), peak_bytes_by_rank.end())) /
          (1 << 20),
      shard ? fmt::format(", each rank reading 1 of {} parts", shard->parts()) : "");
  fmt::print("digest {:016x}\n", digest.value());

  if (!c.metrics_out.empty()) {
    nlohmann::json metrics{
        {"command", "sample"},
        {"data", c.data},
        {"sampler", canonical_sampler(c.sampler)},
        {"fanouts", options.fanouts},
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
        {"partitioned_data", shard.has_value()},
        {"peak_resident_bytes_by_rank", peak_bytes_by_rank},
        {"distributed", report},
        {"traffic_by_epoch", report.is_null() ? nlohmann::json(nullptr) : traffic_by_epoch}};
    if (features)
      metrics["features"] = {
          {"placement", placement.where},
          {"table_memory", memory_space_name(features->table_space())},
          {"cached_vertices", features->cached_vertices()},
          {"cache_policy", c.cache_policy},
          {"rows_gathered", gathered.rows},
          {"cache_hits", gathered.cache_hits},
          {"hit_rate", gathered.hit_rate()},
          {"bytes_from_cache", gathered.bytes_from_cache()},
          {"bytes_from_table", gathered.bytes_from_table()},
          {"seconds", times.get("gather_features")},
          {"device_seconds", exec.device() != nullptr
                                 ? nlohmann::json(device_times.get("gather_features"))
                                 : nlohmann::json(nullptr)}};
    write_file_atomically(c.metrics_out, metrics.dump(2) + "\n");
  }
}

}  // namespace

void add_sample_command(CLI::App& app) {
  auto config = std::make_shared<sample_config>();
  auto* cmd = app.add_subcommand("sample", "Sample minibatches and report throughput");
  cmd->add_option("DATA", config->data,
                  "native dataset directory, OGB raw directory or partitioned dataset (bulkgnn "
                  "partition; each rank reads its part) (default: embedded CSBM)");
  cmd->add_option("--split", config->split,
                  "split whose training vertices are the seeds (default: the first)");
  add_sampler_flags(*cmd, config->sampler);
  cmd->add_option("--fanouts", config->fanouts, fanouts_help())->capture_default_str();
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
  cmd->add_option("--backend,--device", config->backend,
                  "cpu, reference (the serial oracle) or cuda (GPU 0; sage and ladies so far)")
      ->capture_default_str()
      ->check(one_of({"cpu", "reference", "cuda"}));
  cmd->add_option("--metrics-out", config->metrics_out, "write metrics as JSON to this file");
  cmd->add_option("--dump", config->dump, "write every minibatch as a JSON line to this file");
  cmd->add_flag("--quiet", config->quiet, "no progress display");
  add_distribution_options(*cmd, config->distribution, false);
  cmd->callback([config, cmd] {
    require_every_option_decided(*cmd, shared_settings(*config), per_rank_sample_options);
    run_sample(*config);
  });
}

}  // namespace bulkgnn::tools
