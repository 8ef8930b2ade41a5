#include "commands.hpp"

#include "bulkgnn/core/error.hpp"
#include "bulkgnn/core/timer.hpp"
#include "bulkgnn/data/ogb_import.hpp"

#include <fmt/format.h>

#include <memory>

namespace bulkgnn::tools {

namespace {

struct convert_config {
  std::string ogb_dir;
  std::string out_dir;
  bool add_inverse = false;
  bool no_inverse = false;
  bool quiet = false;
  int edge_weight_column = -1;
};

void run_convert(const convert_config& c) {
  BULKGNN_EXPECTS(!(c.add_inverse && c.no_inverse),
                  "--add-inverse-edges and --no-inverse-edges exclude each other");
  data::ogb_import_options options;
  if (c.add_inverse) options.add_inverse_edges = true;
  if (c.no_inverse) options.add_inverse_edges = false;
  options.quiet = c.quiet;
  if (c.edge_weight_column >= 0) options.edge_weight_column = c.edge_weight_column;
  require_writable_directory(c.out_dir, "OUT_DIR");
  require_output_apart_from_input(c.out_dir, "OUT_DIR", c.ogb_dir, "OGB_DIR");
  const stopwatch watch;
  data::import_ogb(c.ogb_dir, c.out_dir, options);
  fmt::print("converted {} -> {} in {:.2f} s\n", c.ogb_dir, c.out_dir, watch.seconds());
}

}  // namespace

void add_convert_command(CLI::App& app) {
  auto config = std::make_shared<convert_config>();
  auto* cmd = app.add_subcommand(
      "convert",
      "Import an OGB node-property raw directory (CSV, or data.npz as ogbn-papers100M ships)");
  cmd->add_option("OGB_DIR", config->ogb_dir, "directory with raw/ and split/")
      ->check(non_empty_path())
      ->required();
  cmd->add_option("OUT_DIR", config->out_dir, "native dataset directory to write")
      ->check(non_empty_path())
      ->required();
  cmd->add_flag("--add-inverse-edges", config->add_inverse,
                "add the reverse of every edge (default: as meta.json says)");
  cmd->add_flag("--no-inverse-edges", config->no_inverse, "keep edges as given");
  cmd->add_option("--edge-weight-column", config->edge_weight_column,
                  "make column K of the edge features (raw/edge-feat.csv.gz or edge_feat of "
                  "raw/data.npz) the edge weight")
      ->check(CLI::Range(0, 1 << 20));
  cmd->add_flag("--quiet", config->quiet, "no progress display");
  cmd->callback([config] { run_convert(*config); });
}

}  // namespace bulkgnn::tools
