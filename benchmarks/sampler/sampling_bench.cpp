// Sampling throughput (sampled edges/s) against bulk size and thread count,
// node-wise (GraphSAGE 15,10,5) and layer-wise (LADIES 1024 per hop), batch
// 1024, on an R-MAT scale-20 edge-factor-16 graph and on the real topology
// graph soc-slashdot0902. Each iteration samples max(64, bulk) minibatches
// (at most one epoch).
//
// The R-MAT graph is generated once into $BULKGNN_BENCH_CACHE (default
// /tmp/bulkgnn-bench-cache) and reused by later runs.
#include "bulkgnn/core/memory.hpp"
#include "bulkgnn/core/parallel.hpp"
#include "bulkgnn/data/dataset.hpp"
#include "bulkgnn/data/generators.hpp"
#include "bulkgnn/sampler/bulk_sampler.hpp"

#include <benchmark/benchmark.h>

#include <cstdlib>
#include <filesystem>
#include <map>
#include <numeric>

namespace {

namespace fs = std::filesystem;
using namespace bulkgnn;

fs::path cache_dir() {
  const char* env = std::getenv("BULKGNN_BENCH_CACHE");
  return env != nullptr ? fs::path(env) : fs::temp_directory_path() / "bulkgnn-bench-cache";
}

const data::dataset& graph(const std::string& name) {
  static std::map<std::string, data::dataset> graphs;
  auto it = graphs.find(name);
  if (it != graphs.end()) return it->second;
  fs::path dir;
  if (name == "rmat20") {
    dir = cache_dir() / "rmat-s20-e16";
    if (!fs::exists(dir / "manifest.json"))
      data::generate_rmat(dir, data::rmat_options{.scale = 20, .edge_factor = 16, .quiet = true});
  } else {
    dir = fs::path(BULKGNN_SHARED_DATA) / name;
  }
  return graphs.emplace(name, data::dataset::open(dir)).first->second;
}

void sample_throughput(benchmark::State& state, const std::string& name, const std::string& kind) {
  const auto bulk = state.range(0);
  const thread_limit limit(static_cast<int>(state.range(1)));
  keep_freed_buffers_for_reuse();
  const auto& ds = graph(name);
  std::vector<vertex_t> seeds(ds.num_nodes());
  std::iota(seeds.begin(), seeds.end(), 0);
  const auto fanouts = kind == "sage" ? std::vector<std::int64_t>{15, 10, 5}
                                      : std::vector<std::int64_t>{1024, 1024, 1024};
  sampler::bulk_sampler sampler(ds.graph(), {.kind = kind, .fanouts = fanouts, .seed = 0});
  // At most one epoch: the real graph has fewer than 256 minibatches of seeds.
  const std::int64_t minibatches =
      std::min<std::int64_t>(std::max<std::int64_t>(64, bulk), (ds.num_nodes() + 1023) / 1024);
  edge_t edges = 0;
  std::uint32_t epoch = 0;
  for (auto _ : state) {
    state.PauseTiming();
    const sampler::epoch_plan plan(seeds, 1024, 0, epoch++);
    state.ResumeTiming();
    for (std::int64_t first = 0; first < minibatches; first += bulk) {
      const auto sample = sampler.sample(plan, first, std::min(bulk, minibatches - first));
      edges += sample.sampled_edges();
      benchmark::DoNotOptimize(sample.layers.back().blocks.indices.data());
    }
  }
  state.counters["edges_per_second"] =
      benchmark::Counter(static_cast<double>(edges), benchmark::Counter::kIsRate);
  state.counters["minibatches_per_second"] = benchmark::Counter(
      static_cast<double>(minibatches * state.iterations()), benchmark::Counter::kIsRate);
}

void bulk_and_thread_sweep(benchmark::internal::Benchmark* b) {
  for (int threads : {1, 2})
    for (int bulk : {1, 4, 16, 64, 256}) b->Args({bulk, threads});
  b->ArgNames({"bulk", "threads"})
      ->Unit(benchmark::kMillisecond)
      ->UseRealTime()
      ->Iterations(1)
      ->Repetitions(3)
      ->ReportAggregatesOnly(true);
}

BENCHMARK_CAPTURE(sample_throughput, sage_rmat20, std::string("rmat20"), "sage")
    ->Apply(bulk_and_thread_sweep);
BENCHMARK_CAPTURE(sample_throughput, ladies_rmat20, std::string("rmat20"), "ladies")
    ->Apply(bulk_and_thread_sweep);
BENCHMARK_CAPTURE(sample_throughput, sage_slashdot, std::string("soc-slashdot0902"), "sage")
    ->Apply(bulk_and_thread_sweep);
BENCHMARK_CAPTURE(sample_throughput, ladies_slashdot, std::string("soc-slashdot0902"), "ladies")
    ->Apply(bulk_and_thread_sweep);

}  // namespace
