#include "commands.hpp"
#include "distribution.hpp"

#include "bulkgnn/core/error.hpp"
#include "bulkgnn/core/interrupt.hpp"
#include "bulkgnn/core/memory.hpp"

#include <fmt/format.h>

#if BULKGNN_HAVE_MPI
#include "bulkgnn/distributed/mpi_session.hpp"
#endif

#include <cstdio>
#include <exception>
#include <filesystem>
#include <memory>
#include <new>
#include <string>
#include <vector>

namespace {

// The exit statuses the README documents; 130 and 143 (interrupted by SIGINT,
// SIGTERM) come from the signal handling.
enum exit_status : int { success = 0, failure = 1, usage_error = 2 };

// Under mpirun a failure on one rank must end every rank (the others may be
// waiting in a collective call), unless every rank raised it alike (a
// collective_error): then each ends normally. Alone, it is an ordinary error
// exit.
int fail(const std::string& library_message, int code,
         [[maybe_unused]] const std::exception& cause) {
  const std::string message = bulkgnn::tools::in_flag_terms(library_message);
#if BULKGNN_HAVE_MPI
  using bulkgnn::distributed::mpi_session;
  if (mpi_session::active()) {
    if (dynamic_cast<const bulkgnn::distributed::collective_error*>(&cause) == nullptr)
      mpi_session::abort_all(message, code);
    mpi_session::print_on_this_rank(message);
    return code;
  }
#endif
  fmt::print(stderr, "bulkgnn: {}\n", message);
  return code;
}

// "bulkgnn train" for a parse error inside `train`: the command whose --help
// lists the options.
std::string command_path(const CLI::App& app) {
  std::string path = app.get_name();
  for (const CLI::App* cmd = &app; !cmd->get_subcommands().empty();) {
    cmd = cmd->get_subcommands().front();
    path += " " + cmd->get_name();
  }
  return path;
}

// Where a command word is due, the first word of `argv` that names none of
// the command's subcommands: "unknown command 'fly' for bulkgnn (expected
// convert, ...)". Empty where every command word is known (the parse error
// is about something else).
std::string unknown_command(const CLI::App& app, int argc, char** argv) {
  const CLI::App* cmd = &app;
  std::string path = app.get_name();
  for (int i = 1; i < argc; ++i) {
    const std::string word = argv[i];
    const auto subcommands = cmd->get_subcommands([](const CLI::App*) { return true; });
    if (subcommands.empty() || word.starts_with("-")) return {};
    const auto named =
        cmd->get_subcommands([&](const CLI::App* sub) { return sub->check_name(word); });
    if (named.empty()) {
      std::vector<std::string> names;
      for (const auto* sub : subcommands) names.push_back(sub->get_name());
      return fmt::format("unknown command '{}' for {} (expected {})", word, path,
                         fmt::join(names, ", "));
    }
    cmd = named.front();
    path += " " + cmd->get_name();
  }
  return {};
}

std::string filesystem_message(const std::filesystem::filesystem_error& e) {
  const auto path = e.path1().string();
  return path.empty() ? fmt::format("error: {}", e.what())
                      : fmt::format("error: {}: {}", path, e.code().message());
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
    return fail(fmt::format("error: {}", e.what()), failure, e);
  }
#endif
  // SIGINT/SIGTERM unwind the command (removing its staging files) and end it
  // with 128 + the signal's number, through the catch below.
  bulkgnn::install_interrupt_handlers();
  CLI::App app{"bulkgnn: bulk minibatch sampling and training for graph neural networks",
               "bulkgnn"};
  app.require_subcommand(1);
  app.set_version_flag("--version", "bulkgnn 0.1.0");
  bulkgnn::tools::add_convert_command(app);
  bulkgnn::tools::add_generate_command(app);
  bulkgnn::tools::add_info_command(app);
  bulkgnn::tools::add_model_command(app);
  bulkgnn::tools::add_partition_command(app);
  bulkgnn::tools::add_split_links_command(app);
  bulkgnn::tools::add_sample_command(app);
  bulkgnn::tools::add_train_command(app);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    // --help and --version end here too, on stdout with status 0.
    if (e.get_exit_code() == static_cast<int>(CLI::ExitCodes::Success)) return app.exit(e);
    // Under mpirun this rank may be alone with a bad command line (each rank
    // can have its own), and the others would wait for it in their first
    // collective call: fail() ends them all.
    const auto unknown = unknown_command(app, argc, argv);
    return fail(fmt::format("error: {} (see {} --help)", unknown.empty() ? e.what() : unknown,
                            command_path(app)),
                usage_error, e);
  } catch (const bulkgnn::interrupted& e) {
    return fail(e.what(), e.exit_code(), e);
  } catch (const bulkgnn::option_error& e) {
    return fail(fmt::format("error: {}", e.what()), usage_error, e);
  } catch (const bulkgnn::error& e) {
    return fail(fmt::format("error: {}", e.what()), failure, e);
  } catch (const std::bad_alloc& e) {
    return fail(fmt::format("error: out of memory: {} asks for more memory than this machine can "
                            "give; lower the sizes its options set (see {} --help)",
                            command_path(app), command_path(app)),
                failure, e);
  } catch (const std::filesystem::filesystem_error& e) {
    return fail(filesystem_message(e), failure, e);
  } catch (const std::exception& e) {
    return fail(fmt::format("unexpected error: {}", e.what()), failure, e);
  }
  return success;
}
