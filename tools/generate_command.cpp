#include "commands.hpp"

#include "bulkgnn/core/error.hpp"
#include "bulkgnn/core/parallel.hpp"
#include "bulkgnn/core/timer.hpp"
#include "bulkgnn/data/generators.hpp"

#include <fmt/format.h>

#include <memory>

namespace bulkgnn::tools {

namespace {

// Options every generator takes, and the run that reports its time.
template <class Options>
struct generator_config {
  Options options;
  std::string out_dir;
  int threads = 0;
};

template <class Options>
void add_common_options(CLI::App& cmd, generator_config<Options>& c) {
  cmd.add_option("OUT_DIR", c.out_dir)->check(non_empty_path())->required();
  cmd.add_option("--seed", c.options.seed)->capture_default_str()->check(integer_in(0, max_seed));
  add_threads_option(cmd, c.threads);
  cmd.add_flag("--quiet", c.options.quiet, "no progress display");
}

template <class Options, class Generate>
void run_generator(const generator_config<Options>& c, Generate generate) {
  require_writable_directory(c.out_dir, "OUT_DIR");
  const thread_limit limit(c.threads);
  const stopwatch watch;
  generate(c.out_dir, c.options);
  fmt::print("generated {} in {:.2f} s\n", c.out_dir, watch.seconds());
}

void add_rmat(CLI::App& generate) {
  auto c = std::make_shared<generator_config<data::rmat_options>>();
  auto* cmd = generate.add_subcommand("rmat", "Graph500 R-MAT graph");
  add_common_options(*cmd, *c);
  cmd->add_option("--scale", c->options.scale, "2^scale vertices")
      ->capture_default_str()
      ->check(integer_in(1, 30));
  cmd->add_option("--edge-factor", c->options.edge_factor, "generated edges per vertex")
      ->capture_default_str()
      ->check(integer_in(1, 1024));
  const auto probability = real_in({.low = 0, .high = 1});
  cmd->add_option("--a", c->options.a)->capture_default_str()->check(probability);
  cmd->add_option("--b", c->options.b)->capture_default_str()->check(probability);
  cmd->add_option("--c", c->options.c)->capture_default_str()->check(probability);
  cmd->add_flag("--undirected", c->options.undirected, "add the reverse of every edge");
  cmd->add_flag("--weights", c->options.weights,
                "edge weights uniform in (0, 1] (the same both ways), for --weighted sampling");
  cmd->add_option("--features", c->options.features, "random features per vertex")
      ->capture_default_str()
      ->check(integer_in(0, max_width));
  cmd->add_option("--classes", c->options.classes, "random labels and a 60/20/20 split")
      ->capture_default_str()
      ->check(integer_in(0, max_classes));
  cmd->callback([c] {
    BULKGNN_EXPECTS(c->options.a + c->options.b + c->options.c <= 1.0,
                    "--a + --b + --c must not exceed 1");
    run_generator(*c, data::generate_rmat);
  });
}

void add_csbm(CLI::App& generate) {
  auto c = std::make_shared<generator_config<data::csbm_options>>();
  auto* cmd =
      generate.add_subcommand("csbm", "contextual stochastic block model with learnable labels");
  add_common_options(*cmd, *c);
  cmd->add_option("--nodes", c->options.nodes)
      ->capture_default_str()
      ->check(integer_in(2, max_vertices));
  cmd->add_option("--classes", c->options.classes)
      ->capture_default_str()
      ->check(integer_in(2, max_classes));
  cmd->add_option("--average-degree", c->options.average_degree)
      ->capture_default_str()
      ->check(real_in({.low = 0, .high = 1e6, .low_open = true}));
  cmd->add_option("--homophily", c->options.homophily, "fraction of edges inside a class")
      ->capture_default_str()
      ->check(real_in({.low = 0, .high = 1}));
  cmd->add_option("--features", c->options.features,
                  "features per vertex around its class's mean; 0: none (the classes show in "
                  "the edges only, for --node-embedding)")
      ->capture_default_str()
      ->check(integer_in(0, max_width));
  cmd->add_option("--signal", c->options.signal, "norm of the class means")
      ->capture_default_str()
      ->check(real_in({.low = 0, .high = 1e6}));
  cmd->callback([c] {
    BULKGNN_EXPECTS(c->options.classes <= c->options.nodes,
                    "--classes {} exceeds --nodes {}: each class needs a vertex",
                    c->options.classes, c->options.nodes);
    BULKGNN_EXPECTS(c->options.average_degree < static_cast<double>(c->options.nodes),
                    "--average-degree {} must be below --nodes {}", c->options.average_degree,
                    c->options.nodes);
    run_generator(*c, data::generate_csbm);
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
