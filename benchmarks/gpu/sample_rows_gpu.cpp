// The CUDA back end's sampling kernels against the cpu back end on one
// machine, side by side: sample_rows (one node-wise hop: `--fanout`
// neighbours of `--rows` random frontier vertices) with the topology in
// device memory and in pinned host memory read through UVA, and the feature
// gather of the sampled vertices' rows. Reports sampled edges/s, the bytes a
// hop must move per sampled edge, and a large device-to-device copy's rate:
// the device's memory bandwidth, the physical limit for sampling.
//
//   sample_rows_gpu [DATA] [--scale 21] [--fanout 15] [--rows 1048576]
//                   [--feature-columns 100] [--repeats 20] [--json-out F]
//
// DATA is a native or OGB raw dataset; without it, an R-MAT graph of 2^scale
// vertices and 16 edges each is generated into a temporary directory (the GPU
// check runs benchmarks with no arguments). Without a visible GPU it says so
// and exits 0: nothing to measure.

#include "bulkgnn/core/parse.hpp"
#include "bulkgnn/core/timer.hpp"
#include "bulkgnn/data/dataset.hpp"
#include "bulkgnn/data/generators.hpp"
#include "bulkgnn/kernels/devices.hpp"
#include "bulkgnn/kernels/relabel.hpp"
#include "bulkgnn/kernels/sample_rows.hpp"
#include "bulkgnn/kernels/spmm.hpp"

#include <fmt/format.h>
#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <functional>
#include <numeric>
#include <random>
#include <vector>

using namespace bulkgnn;

namespace {

// Removes a generated dataset when the benchmark ends, however it ends.
struct removed_at_exit {
  std::filesystem::path path;
  ~removed_at_exit() {
    std::error_code ignored;
    if (!path.empty()) std::filesystem::remove_all(path, ignored);
  }
};

// Median seconds of `repeats` runs of f after one warm-up; `finish` waits
// for queued device work, so each run's time is its whole work.
double median_seconds(int repeats, const std::function<void()>& f,
                      const std::function<void()>& finish) {
  f();
  finish();
  std::vector<double> times;
  for (int r = 0; r < repeats; ++r) {
    const stopwatch clock;
    f();
    finish();
    times.push_back(clock.seconds());
  }
  std::sort(times.begin(), times.end());
  return times[times.size() / 2];
}

int run_benchmark(int argc, char** argv) {
  CLI::App app("CUDA sampling kernels against the cpu back end");
  std::string data;
  std::int64_t fanout = 15;
  std::int64_t frontier = 1 << 20;
  std::int64_t feature_columns = 100;
  int repeats = 20;
  std::string json_out;
  int scale = 21;
  app.add_option("DATA", data, "native or OGB raw dataset directory (default: R-MAT)");
  app.add_option("--scale", scale, "R-MAT graph of 2^scale vertices when no DATA is given")
      ->capture_default_str();
  app.add_option("--fanout", fanout)->capture_default_str();
  app.add_option("--rows", frontier, "frontier vertices per hop")->capture_default_str();
  app.add_option("--feature-columns", feature_columns)->capture_default_str();
  app.add_option("--repeats", repeats)->capture_default_str();
  app.add_option("--json-out", json_out, "write the measurements as JSON to this file");
  CLI11_PARSE(app, argc, argv);

  const auto devices = kernels::visible_cuda_devices();
  if (devices.empty()) {
    fmt::print("sample_rows_gpu: no CUDA device is visible{}; nothing to measure\n",
               kernels::cuda_compiled() ? "" : " (this build has no CUDA back end)");
    return 0;
  }
  removed_at_exit generated;
  if (data.empty()) {
    generated.path =
        std::filesystem::temp_directory_path() / fmt::format("sample_rows_gpu_rmat_{}", ::getpid());
    fmt::print("generating an R-MAT graph of scale {} into {}\n", scale, generated.path.string());
    data::generate_rmat(generated.path, {.scale = scale, .edge_factor = 16, .quiet = true});
    data = generated.path.string();
  }
  const auto ds = data::dataset::open(data);
  const csr_view graph = ds.graph();
  const executor gpu = kernels::make_cuda_executor(0);
  const executor cpu{backend::cpu};
  fmt::print("device: {} ({} GiB); graph: {} vertices, {} edges\n", devices[0].name,
             devices[0].memory_bytes >> 30, graph.rows, graph.indices.size());

  std::mt19937_64 gen(1);
  std::uniform_int_distribution<vertex_t> vertex(0, static_cast<vertex_t>(graph.rows - 1));
  std::vector<vertex_t> rows(static_cast<std::size_t>(frontier));
  for (auto& v : rows) v = vertex(gen);
  const std::vector<std::uint32_t> minibatch(rows.size(), 0);
  const kernels::row_sampling_options draw{.fanout = fanout};

  const auto device_graph = copy_to(graph, gpu.memory());
  const auto pinned_graph = copy_to(graph, gpu.device()->pinned_memory());
  const auto device_rows = copy_to(std::span<const vertex_t>(rows), gpu.memory());
  const auto device_minibatch = copy_to(std::span<const std::uint32_t>(minibatch), gpu.memory());
  const kernels::row_streams host_streams{.seed = 3, .minibatch_of_row = minibatch};
  const kernels::row_streams device_streams{.seed = 3, .minibatch_of_row = device_minibatch};

  const auto sampled = kernels::sample_rows(cpu, graph, rows, host_streams, draw);
  const auto edges = static_cast<double>(sampled.indices.size());
  const auto nothing = [] {};
  const auto wait = [&] { gpu.device()->synchronize(); };
  nlohmann::json results = nlohmann::json::array();
  // `count` sampled edges processed (the sample_rows hop's unless given).
  const auto report = [&](const std::string& name, double seconds, double bytes,
                          double count = -1) {
    if (count < 0) count = edges;
    fmt::print("  {:<40} {:9.3f} ms  {:8.1f} M edges/s  {:7.1f} GB/s\n", name, seconds * 1e3,
               count / seconds / 1e6, bytes / seconds / 1e9);
    results.push_back({{"name", name},
                       {"seconds", seconds},
                       {"edges_per_second", count / seconds},
                       {"bytes_per_second", bytes / seconds}});
  };
  // The fewest bytes a hop moves: per row its vertex id, two indptr entries
  // and the output offset; per sampled edge the column read and written.
  const double hop_bytes = static_cast<double>(rows.size()) * (4 + 16 + 8) + edges * (4 + 4);
  fmt::print(
      "sample_rows, fanout {}, {} rows, {:.0f} sampled edges ({:.1f} bytes per edge at "
      "least):\n",
      fanout, rows.size(), edges, hop_bytes / edges);
  report("cpu, every core",
         median_seconds(
             repeats, [&] { (void)kernels::sample_rows(cpu, graph, rows, host_streams, draw); },
             nothing),
         hop_bytes);
  report("cuda, topology in device memory",
         median_seconds(
             repeats,
             [&] {
               (void)kernels::sample_rows(gpu, device_graph.view(), device_rows, device_streams,
                                          draw);
             },
             wait),
         hop_bytes);
  report("cuda, topology in pinned host memory (UVA)",
         median_seconds(
             repeats,
             [&] {
               (void)kernels::sample_rows(gpu, pinned_graph.view(), device_rows, device_streams,
                                          draw);
             },
             wait),
         hop_bytes);

  // Relabelling a hop's samples, one segment (a minibatch's frontier) per
  // 16384 distinct destinations: sort-based against hash-table grouping.
  {
    std::vector<vertex_t> permutation(static_cast<std::size_t>(graph.rows));
    std::iota(permutation.begin(), permutation.end(), 0);
    std::shuffle(permutation.begin(), permutation.end(), gen);
    const std::int64_t segment_size = std::min<std::int64_t>(16384, graph.rows);
    segmented_vertices destinations;
    for (std::int64_t first = 0; first < frontier; first += segment_size) {
      const auto start = static_cast<std::size_t>(first % (graph.rows - segment_size + 1));
      destinations.push_segment(std::span<const vertex_t>(permutation)
                                    .subspan(start, static_cast<std::size_t>(segment_size)));
    }
    const std::vector<std::uint32_t> segment_minibatch(destinations.vertices.size(), 0);
    const auto drawn =
        kernels::sample_rows(cpu, graph, destinations.vertices,
                             {.seed = 4, .minibatch_of_row = segment_minibatch}, draw);
    segmented_vertices destinations_there;
    destinations_there.vertices =
        copy_to(std::span<const vertex_t>(destinations.vertices), gpu.memory());
    destinations_there.offsets =
        copy_to(std::span<const std::int64_t>(destinations.offsets), gpu.device()->pinned_memory());
    const auto drawn_there = copy_to(drawn.view(), gpu.memory());
    const double relabel_bytes = static_cast<double>(drawn.indices.size()) * (4 + 4);
    fmt::print("relabel_by_segment, {} segments, {} sampled entries:\n", destinations.segments(),
               drawn.indices.size());
    report("cpu, every core",
           median_seconds(
               repeats, [&] { (void)kernels::relabel_by_segment(cpu, destinations, drawn.view()); },
               nothing),
           relabel_bytes, static_cast<double>(drawn.indices.size()));
    for (const auto method : {kernels::relabel_method::sort, kernels::relabel_method::hash})
      report(
          method == kernels::relabel_method::sort ? "cuda, stable radix sort" : "cuda, hash table",
          median_seconds(
              repeats,
              [&] {
                (void)kernels::relabel_by_segment(gpu, destinations_there, drawn_there.view(),
                                                  method);
              },
              wait),
          relabel_bytes, static_cast<double>(drawn.indices.size()));
  }

  // The feature rows of the sampled vertices, as the gather stage reads them.
  const auto n = graph.rows;
  std::vector<float> features(static_cast<std::size_t>(n * feature_columns));
  std::normal_distribution<float> normal;
  for (auto& x : features) x = normal(gen);
  const auto device_features = copy_to(std::span<const float>(features), gpu.memory());
  const auto pinned_features =
      copy_to(std::span<const float>(features), gpu.device()->pinned_memory());
  const auto device_sampled = copy_to(std::span<const vertex_t>(sampled.indices), gpu.memory());
  const auto gathered_rows = static_cast<std::int64_t>(sampled.indices.size());
  std::vector<float> host_out(static_cast<std::size_t>(gathered_rows * feature_columns));
  buffer<float> device_out(host_out.size(), gpu.memory());
  const double gather_bytes = 2.0 * static_cast<double>(host_out.size()) * sizeof(float);
  fmt::print("gather_dense_rows, {} rows of {} floats:\n", gathered_rows, feature_columns);
  report("cpu, every core",
         median_seconds(
             repeats,
             [&] {
               kernels::gather_dense_rows(cpu, {n, feature_columns, features}, sampled.indices,
                                          {gathered_rows, feature_columns, host_out});
             },
             nothing),
         gather_bytes);
  for (const auto* source : {&device_features, &pinned_features})
    report(source == &device_features ? "cuda, features in device memory"
                                      : "cuda, features in pinned host memory (UVA)",
           median_seconds(
               repeats,
               [&] {
                 kernels::gather_dense_rows(
                     gpu, {n, feature_columns, std::span<const float>(*source), source->space()},
                     device_sampled,
                     {gathered_rows, feature_columns, std::span<float>(device_out),
                      memory_space::device});
               },
               wait),
           gather_bytes);

  // The device's memory bandwidth: a 1 GiB device-to-device copy, counting
  // bytes read and written.
  const std::size_t copy_bytes = std::size_t{1} << 30;
  buffer<std::byte> from(copy_bytes, gpu.memory());
  buffer<std::byte> to(copy_bytes, gpu.memory());
  const double copy_seconds = median_seconds(
      repeats, [&] { gpu.memory().copy(to.data(), from.data(), copy_bytes); }, wait);
  fmt::print("device-to-device copy of 1 GiB: {:.1f} GB/s (read + write)\n",
             2.0 * copy_bytes / copy_seconds / 1e9);
  results.push_back(
      {{"name", "device copy"}, {"bytes_per_second", 2.0 * copy_bytes / copy_seconds}});

  if (!json_out.empty()) {
    std::ofstream out(json_out);
    out << nlohmann::json{{"device", devices[0].name},
                          {"data", data},
                          {"fanout", fanout},
                          {"rows", frontier},
                          {"results", results}}
               .dump(2)
        << "\n";
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    return run_benchmark(argc, argv);
  } catch (const std::exception& e) {
    fmt::print(stderr, "sample_rows_gpu: {}\n", e.what());
    return 1;
  }
}
