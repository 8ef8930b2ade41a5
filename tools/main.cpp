#include "commands.hpp"

#include "bulkgnn/core/error.hpp"
#include "bulkgnn/core/memory.hpp"

#include <fmt/format.h>

#include <cstdio>
#include <exception>

int main(int argc, char** argv) {
  bulkgnn::keep_freed_buffers_for_reuse();
  CLI::App app{"bulkgnn: bulk minibatch sampling and training for graph neural networks"};
  app.require_subcommand(1);
  app.set_version_flag("--version", "bulkgnn 0.1.0");
  bulkgnn::tools::add_convert_command(app);
  bulkgnn::tools::add_generate_command(app);
  bulkgnn::tools::add_info_command(app);
  bulkgnn::tools::add_sample_command(app);
  bulkgnn::tools::add_train_command(app);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  } catch (const bulkgnn::error& e) {
    fmt::print(stderr, "bulkgnn: error: {}\n", e.what());
    return 1;
  } catch (const std::exception& e) {
    fmt::print(stderr, "bulkgnn: unexpected error: {}\n", e.what());
    return 2;
  }
  return 0;
}
