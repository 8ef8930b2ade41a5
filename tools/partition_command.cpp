#include "commands.hpp"

#include "bulkgnn/core/error.hpp"
#include "bulkgnn/core/timer.hpp"
#include "bulkgnn/data/partitioned_dataset.hpp"
#include "bulkgnn/distributed/partition.hpp"
#include "bulkgnn/session/session.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <memory>

namespace bulkgnn::tools {

namespace {

struct partition_config {
  std::string data;
  std::string out_dir;
  int parts = 2;
  std::string method = "block";
  int seed = 0;
  bool quiet = false;
};

void run_partition(const partition_config& c) {
  BULKGNN_EXPECTS(session::world_size() == 1,
                  "partition runs once, ahead of the ranks that read it: run it without mpirun");
  require_writable_directory(c.out_dir, "OUT_DIR");
  require_output_apart_from_input(c.out_dir, "OUT_DIR", c.data, "DATA");
  const stopwatch watch;
  const auto ds = open_dataset_or_default(c.data, c.quiet);
  BULKGNN_EXPECTS(c.parts <= std::max<std::int64_t>(1, ds.num_nodes()),
                  "--parts {}: more parts than the {} vertices of {}", c.parts, ds.num_nodes(),
                  ds.name());
  const auto partition = distributed::make_partition(c.method, ds.graph(), c.parts, c.seed);
  const auto cut = distributed::edge_cut(ds.graph(), partition);
  data::write_partitioned_dataset(ds, partition.owner, c.parts,
                                  {.method = c.method, .seed = c.seed, .edge_cut = cut}, c.out_dir);
  std::int64_t largest = 0;
  for (int p = 0; p < c.parts; ++p) largest = std::max(largest, partition.part_size(p));
  const double edges = static_cast<double>(std::max<edge_t>(ds.num_edges(), 1));
  fmt::print(
      "partitioned {} ({} vertices, {} edges) into {} parts by {}: edge cut {} ({:.1f}%), "
      "largest part {} vertices; wrote {} in {:.2f} s\n",
      ds.name(), ds.num_nodes(), ds.num_edges(), c.parts, c.method, cut,
      100.0 * static_cast<double>(cut) / edges, largest, c.out_dir, watch.seconds());
}

}  // namespace

void add_partition_command(CLI::App& app) {
  auto config = std::make_shared<partition_config>();
  auto* cmd = app.add_subcommand(
      "partition",
      "Split a dataset by vertex into parts that the ranks of a sharded run read alone");
  cmd->add_option("DATA", config->data,
                  "native dataset directory or OGB raw directory (default: embedded CSBM)")
      ->check(non_empty_path())
      ->required();
  cmd->add_option("OUT_DIR", config->out_dir, "partitioned dataset directory to write")
      ->check(non_empty_path())
      ->required();
  cmd->add_option("--parts", config->parts,
                  "number of parts: the grid's (1.5d: ranks / replication; 2d: sqrt(ranks); 3d: "
                  "replication * sqrt(ranks / replication))")
      ->capture_default_str()
      ->check(integer_in(1, max_ranks));
  cmd->add_option("--method", config->method,
                  "block (contiguous id ranges) or metis (fewest cut edges)")
      ->capture_default_str()
      ->check(one_of({"block", "metis"}));
  cmd->add_option("--seed", config->seed, "METIS seed")
      ->capture_default_str()
      ->check(integer_in(0, std::numeric_limits<int>::max()));
  cmd->add_flag("--quiet", config->quiet, "no progress display");
  cmd->callback([config] { run_partition(*config); });
}

}  // namespace bulkgnn::tools
