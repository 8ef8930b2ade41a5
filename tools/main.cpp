#include "commands.hpp"

#include "bulkgnn/core/error.hpp"
#include "bulkgnn/core/memory.hpp"

#include <fmt/format.h>

#if BULKGNN_HAVE_MPI
#include "bulkgnn/distributed/mpi_session.hpp"
#endif

#include <cstdio>
#include <exception>
#include <memory>
#include <string>

namespace {

// Under mpirun a failure on one rank must end every rank (the others may be
// waiting in a collective call); alone, it is an ordinary error exit.
int fail(const std::string& message, int code) {
#if BULKGNN_HAVE_MPI
  if (bulkgnn::distributed::mpi_session::active())
    bulkgnn::distributed::mpi_session::abort_all(message, code);
#endif
  fmt::print(stderr, "bulkgnn: {}\n", message);
  return code;
}

}  // namespace

int main(int argc, char** argv) {
  bulkgnn::keep_freed_buffers_for_reuse();
#if BULKGNN_HAVE_MPI
  std::unique_ptr<bulkgnn::distributed::mpi_session> mpi;
  try {
    if (bulkgnn::distributed::mpi_session::launched_by_mpi())
      mpi = std::make_unique<bulkgnn::distributed::mpi_session>(argc, argv);
  } catch (const std::exception& e) {
    return fail(fmt::format("error: {}", e.what()), 1);
  }
#endif
  CLI::App app{"bulkgnn: bulk minibatch sampling and training for graph neural networks"};
  app.require_subcommand(1);
  app.set_version_flag("--version", "bulkgnn 0.1.0");
  bulkgnn::tools::add_convert_command(app);
  bulkgnn::tools::add_generate_command(app);
  bulkgnn::tools::add_info_command(app);
  bulkgnn::tools::add_model_command(app);
  bulkgnn::tools::add_sample_command(app);
  bulkgnn::tools::add_train_command(app);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    // Every rank parses the same command line, so every rank exits alike.
    return app.exit(e);
  } catch (const bulkgnn::error& e) {
    return fail(fmt::format("error: {}", e.what()), 1);
  } catch (const std::exception& e) {
    return fail(fmt::format("unexpected error: {}", e.what()), 2);
  }
  return 0;
}
