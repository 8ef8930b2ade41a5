#pragma once

// The sampler's flags of `sample`, `train` and `model`, all read from the
// sampler table (sampler/sampler_table.hpp): a sampler added there appears
// here with its help and its parameters, with no change to tools/.

#include "bulkgnn/sampler/options.hpp"
#include "bulkgnn/session/session.hpp"

#include <CLI/CLI.hpp>

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace bulkgnn::tools {

struct sampler_flags {
  std::string name = "sage";
  // The sampler parameters given on the command line, by parameter name.
  std::map<std::string, std::int64_t, std::less<>> parameters;
  std::string cache_dir;  // --subgraph-cache
  // --sampler-program: a sampler program's JSON (sampler_program.hpp),
  // registered and chosen in place of --sampler.
  std::string program_file;
};

// --sampler (a name of the table, its help from the entries' summaries),
// --sampler-program, one flag per sampler parameter and --subgraph-cache.
void add_sampler_flags(CLI::App& cmd, sampler_flags& flags);

// The canonical sampler name (a --sampler-program read and registered on
// the first call: an option_error naming the file if it cannot be read, is
// not a program, or its layer is no layer) and its parameters; option_error naming
// the flag if a parameter given does not belong to the chosen sampler.
[[nodiscard]] std::string canonical_sampler(const sampler_flags& flags);
[[nodiscard]] std::map<std::string, std::int64_t, std::less<>> sampler_parameters(
    const sampler_flags& flags);

// The sampler flags given beyond --sampler (its parameters, --subgraph-cache):
// full-batch training, which samples nothing, refuses them.
[[nodiscard]] std::vector<std::string> given_parameter_flags(const sampler_flags& flags);

// What every MPI rank must give alike: --sampler, the program's steps and
// each parameter flag.
[[nodiscard]] std::vector<session::setting> sampler_settings(const sampler_flags& flags);

// --fanouts' help: what a fanout counts for each sampler.
[[nodiscard]] std::string fanouts_help();

}  // namespace bulkgnn::tools
