#include "commands.hpp"

#include "bulkgnn/data/dataset.hpp"
#include "bulkgnn/kernels/devices.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <memory>
#include <vector>

namespace bulkgnn::tools {

namespace {

struct degree_summary {
  edge_t min = 0, max = 0, median = 0;
  double mean = 0;
  std::int64_t isolated = 0;
};

degree_summary summarise_degrees(csr_view graph) {
  degree_summary s;
  if (graph.rows == 0) return s;
  std::vector<edge_t> degrees(graph.rows);
  for (std::int64_t v = 0; v < graph.rows; ++v) degrees[v] = graph.degree(v);
  s.isolated = std::count(degrees.begin(), degrees.end(), 0);
  s.mean = static_cast<double>(graph.nnz()) / graph.rows;
  auto middle = degrees.begin() + graph.rows / 2;
  std::nth_element(degrees.begin(), middle, degrees.end());
  s.median = *middle;
  const auto [lo, hi] = std::minmax_element(degrees.begin(), degrees.end());
  s.min = *lo;
  s.max = *hi;
  return s;
}

// The GPUs a cuda executor could run on (--backend cuda takes device 0).
void print_devices() {
  const auto devices = kernels::visible_cuda_devices();
  if (devices.empty())
    fmt::print("devices    cpu only ({})\n", kernels::cuda_compiled()
                                                 ? "no CUDA device is visible"
                                                 : "this build has no CUDA back end");
  for (const auto& d : devices)
    fmt::print("device     cuda:{} {}, {:.1f} GiB, compute capability {}.{}\n", d.id, d.name,
               static_cast<double>(d.memory_bytes) / (1 << 30), d.compute_capability / 10,
               d.compute_capability % 10);
}

struct info_config {
  std::string data;
  bool quiet = false;
};

void run_info(const info_config& c) {
  const auto ds = open_dataset_or_default(c.data, c.quiet);
  const auto degrees = summarise_degrees(ds.graph());
  fmt::print("dataset    {}\n", ds.name());
  fmt::print("nodes      {}\n", ds.num_nodes());
  fmt::print("edges      {} (directed, stored as in-neighbour rows)\n", ds.num_edges());
  fmt::print("in-degree  min {} / median {} / mean {:.2f} / max {}; {} isolated\n", degrees.min,
             degrees.median, degrees.mean, degrees.max, degrees.isolated);
  fmt::print("weights    {}\n", ds.graph().weighted() ? "yes" : "no");
  fmt::print("features   {}\n", ds.features().cols);
  fmt::print("classes    {}\n", ds.num_classes());
  if (ds.splits().empty()) fmt::print("splits     none\n");
  for (const auto& s : ds.splits())
    fmt::print("split      {}: train {} / valid {} / test {}\n", s.name, s.train.size(),
               s.valid.size(), s.test.size());
  print_devices();
}

}  // namespace

void add_info_command(CLI::App& app) {
  auto config = std::make_shared<info_config>();
  auto* cmd =
      app.add_subcommand("info", "Print the size, degrees, features and splits of a dataset");
  cmd->add_option("DATA", config->data, "native dataset directory or OGB raw directory")
      ->check(non_empty_path())
      ->required();
  cmd->add_flag("--quiet", config->quiet, "no progress display (importing an OGB raw directory)");
  cmd->callback([config] { run_info(*config); });
}

}  // namespace bulkgnn::tools
