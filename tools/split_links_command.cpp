#include "commands.hpp"

#include "bulkgnn/core/error.hpp"
#include "bulkgnn/core/timer.hpp"
#include "bulkgnn/data/link_split.hpp"
#include "bulkgnn/session/session.hpp"

#include <fmt/format.h>

#include <limits>
#include <memory>

namespace bulkgnn::tools {

namespace {

struct split_links_config {
  std::string data;
  std::string out_dir;
  std::string link_split = "0.1,0.2";
  double split_negatives = 1;
  std::int64_t seed = 0;
  bool quiet = false;
};

void run_split_links(const split_links_config& c) {
  BULKGNN_EXPECTS(session::world_size() == 1,
                  "split-links runs once, ahead of the runs that read it: run it without mpirun");
  require_writable_directory(c.out_dir, "OUT_DIR");
  require_output_apart_from_input(c.out_dir, "OUT_DIR", c.data, "DATA");
  const auto [valid, test] = parse_link_split(c.link_split);
  const stopwatch watch;
  const auto ds = open_dataset_or_default(c.data, c.quiet);
  const auto split =
      data::random_link_split(ds.graph(), {.valid_fraction = valid,
                                           .test_fraction = test,
                                           .negatives_per_positive = c.split_negatives,
                                           .seed = static_cast<std::uint32_t>(c.seed)});
  data::write_link_split(c.out_dir, split, ds.graph());
  fmt::print(
      "split the {}edges of {} ({} vertices) as PyG's RandomLinkSplit (seed {}): {} train, {} "
      "valid, {} test, {} valid and {} test negatives; wrote {} in {:.2f} s (train on it with "
      "`bulkgnn train DATA --task link --link-split-dir {}`)\n",
      split.undirected ? "undirected " : "", ds.name(), ds.num_nodes(), c.seed, split.train.size(),
      split.valid.size(), split.test.size(), split.valid_negatives.size(),
      split.test_negatives.size(), c.out_dir, watch.seconds(), c.out_dir);
}

}  // namespace

void add_split_links_command(CLI::App& app) {
  auto config = std::make_shared<split_links_config>();
  auto* cmd = app.add_subcommand(
      "split-links",
      "Split a dataset's edges for link prediction (as PyG's RandomLinkSplit) and store the "
      "split, for `train --task link --link-split-dir`");
  cmd->add_option("DATA", config->data, "native dataset directory or OGB raw directory")
      ->check(non_empty_path())
      ->required();
  cmd->add_option("OUT_DIR", config->out_dir, "link split directory to write")
      ->check(non_empty_path())
      ->required();
  cmd->add_option("--link-split", config->link_split, "VALID,TEST fractions of the edges held out")
      ->capture_default_str();
  cmd->add_option("--split-negatives", config->split_negatives,
                  "fixed negatives per held-out positive for valid and test (none an edge)")
      ->capture_default_str()
      ->check(real_in({.low = 0, .high = 1000}));
  cmd->add_option("--seed", config->seed, "the split's seed")
      ->capture_default_str()
      ->check(integer_in(0, max_seed));
  cmd->add_flag("--quiet", config->quiet, "no progress display");
  cmd->callback([config] { run_split_links(*config); });
}

}  // namespace bulkgnn::tools
