#include "commands.hpp"

#include "bulkgnn/core/error.hpp"
#include "bulkgnn/core/parallel.hpp"
#include "bulkgnn/core/timer.hpp"
#include "bulkgnn/data/generators.hpp"

#include <fmt/format.h>

#include <memory>

namespace bulkgnn::tools {

namespace {

void add_rmat(CLI::App& generate) {
  struct config {
    data::rmat_options options;
    std::string out_dir;
    int threads = 0;
  };
  auto c = std::make_shared<config>();
  auto* cmd = generate.add_subcommand("rmat", "Graph500 R-MAT graph");
  cmd->add_option("OUT_DIR", c->out_dir)->required();
  cmd->add_option("--scale", c->options.scale, "2^scale vertices")
      ->capture_default_str()
      ->check(CLI::Range(1, 30));
  cmd->add_option("--edge-factor", c->options.edge_factor, "generated edges per vertex")
      ->capture_default_str()
      ->check(CLI::Range(1, 1024));
  cmd->add_option("--a", c->options.a)->capture_default_str()->check(CLI::Range(0.0, 1.0));
  cmd->add_option("--b", c->options.b)->capture_default_str()->check(CLI::Range(0.0, 1.0));
  cmd->add_option("--c", c->options.c)->capture_default_str()->check(CLI::Range(0.0, 1.0));
  cmd->add_flag("--undirected", c->options.undirected, "add the reverse of every edge");
  cmd->add_option("--features", c->options.features, "random features per vertex")
      ->capture_default_str()
      ->check(CLI::NonNegativeNumber);
  cmd->add_option("--classes", c->options.classes, "random labels and a 60/20/20 split")
      ->capture_default_str()
      ->check(CLI::NonNegativeNumber);
  cmd->add_option("--seed", c->options.seed)->capture_default_str();
  cmd->add_option("--threads", c->threads, "worker threads (0 = all cores)")->capture_default_str();
  cmd->add_flag("--quiet", c->options.quiet, "no progress display");
  cmd->callback([c] {
    BULKGNN_EXPECTS(c->options.a + c->options.b + c->options.c <= 1.0,
                    "--a + --b + --c must not exceed 1");
    const thread_limit limit(c->threads);
    const stopwatch watch;
    data::generate_rmat(c->out_dir, c->options);
    fmt::print("generated {} in {:.2f} s\n", c->out_dir, watch.seconds());
  });
}

void add_csbm(CLI::App& generate) {
  struct config {
    data::csbm_options options;
    std::string out_dir;
    int threads = 0;
  };
  auto c = std::make_shared<config>();
  auto* cmd =
      generate.add_subcommand("csbm", "contextual stochastic block model with learnable labels");
  cmd->add_option("OUT_DIR", c->out_dir)->required();
  cmd->add_option("--nodes", c->options.nodes)
      ->capture_default_str()
      ->check(CLI::Range(int64_t{2}, int64_t{1} << 31));
  cmd->add_option("--classes", c->options.classes)
      ->capture_default_str()
      ->check(CLI::Range(2, 1 << 20));
  cmd->add_option("--average-degree", c->options.average_degree)
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  cmd->add_option("--homophily", c->options.homophily, "fraction of edges inside a class")
      ->capture_default_str()
      ->check(CLI::Range(0.0, 1.0));
  cmd->add_option("--features", c->options.features)
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  cmd->add_option("--signal", c->options.signal, "norm of the class means")
      ->capture_default_str()
      ->check(CLI::NonNegativeNumber);
  cmd->add_option("--seed", c->options.seed)->capture_default_str();
  cmd->add_option("--threads", c->threads, "worker threads (0 = all cores)")->capture_default_str();
  cmd->add_flag("--quiet", c->options.quiet, "no progress display");
  cmd->callback([c] {
    const thread_limit limit(c->threads);
    const stopwatch watch;
    data::generate_csbm(c->out_dir, c->options);
    fmt::print("generated {} in {:.2f} s\n", c->out_dir, watch.seconds());
  });
}

}  // namespace

void add_generate_command(CLI::App& app) {
  auto* cmd = app.add_subcommand("generate", "Generate a synthetic dataset");
  cmd->require_subcommand(1);
  add_rmat(*cmd);
  add_csbm(*cmd);
}

}  // namespace bulkgnn::tools
