// Loader throughput: what a trainer consuming bulkgnn's multistage pipeline
// (shuffle → bulk sample → feature gather) receives per second, with no
// training behind it. The counterpart of iterating PyG's NeighborLoader or
// DGL's DataLoader with feature prefetching in benchmarks/peers.
//
//   loader_throughput DATA [--split NAME] [--fanouts 15,10,5] [--batch-size 1024]
//                     [--bulk 32] [--epochs 1] [--max-minibatches 0] [--threads 2]
//                     [--seed 0] [--json-out F]
//
// Seeds are the split's training vertices, or every vertex if the dataset has
// no split (as `bulkgnn sample` does). Time runs from the first epoch's start
// to the last minibatch handed out; opening the dataset is not timed.

#include "bulkgnn/core/memory.hpp"
#include "bulkgnn/core/parallel.hpp"
#include "bulkgnn/core/parse.hpp"
#include "bulkgnn/core/timer.hpp"
#include "bulkgnn/data/dataset.hpp"
#include "bulkgnn/loader/loader.hpp"
#include "bulkgnn/sampler/bulk_sampler.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <fstream>
#include <vector>

using namespace bulkgnn;

namespace {

int run_benchmark(int argc, char** argv) {
  CLI::App app("Throughput of bulkgnn's minibatch loader (sampling + feature gather)");
  std::string data;
  std::string split;
  std::string fanouts = "15,10,5";
  std::int64_t batch_size = 1024;
  std::int64_t bulk = 32;
  std::int64_t epochs = 1;
  std::int64_t max_minibatches = 0;
  int threads = 2;
  std::uint32_t seed = 0;
  std::string json_out;
  app.add_option("DATA", data, "native or OGB raw dataset directory")->required();
  app.add_option("--split", split, "split whose training vertices are the seeds");
  app.add_option("--fanouts", fanouts, "per hop from the seeds")->capture_default_str();
  app.add_option("--batch-size", batch_size)->capture_default_str();
  app.add_option("--bulk", bulk)->capture_default_str();
  app.add_option("--epochs", epochs)->capture_default_str();
  app.add_option("--max-minibatches", max_minibatches, "per epoch; 0 = all")->capture_default_str();
  app.add_option("--threads", threads)->capture_default_str();
  app.add_option("--seed", seed)->capture_default_str();
  app.add_option("--json-out", json_out, "write the measurement as JSON to this file");
  CLI11_PARSE(app, argc, argv);

  // As the bulkgnn command does at start: reuse freed bulk buffers instead of
  // faulting fresh pages in for every bulk.
  keep_freed_buffers_for_reuse();
  const thread_limit limit(threads);
  const auto ds = data::dataset::open(data);
  const auto seeds = ds.training_vertices(split);
  sampler::bulk_sampler sampler(ds.graph(),
                                {.fanouts = parse_int_list(fanouts, "--fanouts"), .seed = seed});
  loader::minibatch_loader loader(
      {ds.graph(), ds.features(), ds.labels()}, sampler,
      {.batch_size = batch_size, .bulk = bulk, .max_minibatches = max_minibatches});

  std::int64_t minibatches = 0;
  std::int64_t sampled_edges = 0;
  std::int64_t input_nodes = 0;
  std::int64_t feature_bytes = 0;
  double sample_busy = 0;
  double gather_busy = 0;
  // Per epoch: its time over its slowest stage's busy time (1 is perfect
  // overlap), and the largest busy time of a stage over the epoch's time
  // (a stage timed outside its epoch would show above 1).
  std::vector<double> overlap;
  double busiest_share = 0;
  const stopwatch clock;
  for (std::int64_t epoch = 0; epoch < epochs; ++epoch) {
    auto stream = loader.epoch(seeds, static_cast<std::uint32_t>(epoch));
    while (auto mb = stream.next()) {
      ++minibatches;
      for (const auto& block : mb->batch.blocks) sampled_edges += block.nnz();
      input_nodes += static_cast<std::int64_t>(mb->batch.input_nodes.size());
      feature_bytes += static_cast<std::int64_t>(mb->features.size() * sizeof(float));
    }
    const auto report = stream.report();
    for (const auto& stage : report.stages) {
      if (stage.name == "sample") sample_busy += stage.busy_seconds;
      if (stage.name == "gather") gather_busy += stage.busy_seconds;
      busiest_share = std::max(busiest_share, stage.busy_seconds / report.seconds);
    }
    overlap.push_back(report.overlap_ratio());
  }
  const double seconds = clock.seconds();

  const nlohmann::json result{
      {"data", data},
      {"fanouts", fanouts},
      {"batch_size", batch_size},
      {"bulk", bulk},
      {"threads", threads},
      {"epochs", epochs},
      {"minibatches", minibatches},
      {"sampled_edges", sampled_edges},
      {"input_nodes", input_nodes},
      {"feature_bytes", feature_bytes},
      {"seconds", seconds},
      {"sample_busy_seconds", sample_busy},
      {"gather_busy_seconds", gather_busy},
      {"overlap_ratio_per_epoch", overlap},
      {"busiest_stage_share_of_epoch", busiest_share},
      {"minibatches_per_second", minibatches / seconds},
      {"edges_per_second", static_cast<double>(sampled_edges) / seconds},
      {"feature_bytes_per_second", static_cast<double>(feature_bytes) / seconds}};
  fmt::print(
      "{} minibatches, {} sampled edges, {:.1f} MB of features in {:.3f} s: {:.1f} "
      "minibatches/s, {:.3g} edges/s, {:.3g} feature bytes/s\n",
      minibatches, sampled_edges, feature_bytes / 1e6, seconds, minibatches / seconds,
      sampled_edges / seconds, feature_bytes / seconds);
  fmt::print("overlap ratio per epoch (epoch time over the slowest stage's busy time): {:.3f}\n",
             fmt::join(overlap, ", "));
  fmt::print("busiest stage's share of its epoch: {:.3f}\n", busiest_share);
  if (!json_out.empty()) std::ofstream(json_out) << result.dump(2) << '\n';
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    return run_benchmark(argc, argv);
  } catch (const std::exception& e) {
    fmt::print(stderr, "loader_throughput: {}\n", e.what());
    return 1;
  }
}
