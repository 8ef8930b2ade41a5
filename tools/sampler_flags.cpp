#include "sampler_flags.hpp"

#include "commands.hpp"

#include "bulkgnn/core/error.hpp"
#include "bulkgnn/core/hash.hpp"
#include "bulkgnn/sampler/sampler_program.hpp"
#include "bulkgnn/sampler/sampler_table.hpp"
#include "bulkgnn/trainer/layer_table.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <fstream>
#include <map>
#include <sstream>

namespace bulkgnn::tools {

namespace {

std::string flag_of(std::string_view parameter) {
  std::string flag = "--" + std::string(parameter);
  std::ranges::replace(flag, '_', '-');
  return flag;
}

// The samplers that take `parameter`, for its help.
std::vector<std::string_view> samplers_taking(std::string_view parameter) {
  std::vector<std::string_view> names;
  for (const auto& entry : sampler::sampler_table())
    if (std::ranges::find(entry.parameters, parameter, &sampler::sampler_parameter::name) !=
        entry.parameters.end())
      names.push_back(entry.name);
  return names;
}

// The program of --sampler-program FILE, read and registered once (the file
// may be a pipe).
const sampler::sampler_program& program_of(const std::string& file) {
  static std::map<std::string, std::string, std::less<>> registered;  // file -> name
  if (const auto known = registered.find(file); known != registered.end())
    return *sampler::find_sampler_program(known->second);
  std::ifstream in(file);
  BULKGNN_EXPECTS(in.good(), "--sampler-program {}: cannot read the file", file);
  std::ostringstream text;
  text << in.rdbuf();
  const auto program = sampler::parse_sampler_program(text.str(), file);
  (void)trainer::find_layer(program.layer, fmt::format("--sampler-program {}: layer", file));
  const auto& entry = sampler::register_sampler_program(program);
  registered.emplace(file, entry.name);
  return *sampler::find_sampler_program(entry.name);
}

// A digest of the program's steps, which every MPI rank must run alike.
std::string program_digest(const sampler::sampler_program& program) {
  digest_hasher hasher;
  for (const char c : sampler::to_json(program)) hasher.add(static_cast<std::uint64_t>(c));
  return fmt::format("{:016x}", hasher.value());
}

}  // namespace

void add_sampler_flags(CLI::App& cmd, sampler_flags& flags) {
  std::vector<std::string> names;
  std::string help;
  for (const auto& entry : sampler::sampler_table()) {
    names.emplace_back(entry.name);
    for (const auto alias : entry.aliases) names.emplace_back(alias);
    help += fmt::format("{}{}: {}", help.empty() ? "" : "; ", entry.name, entry.summary);
  }
  auto* sampler =
      cmd.add_option("--sampler", flags.name, help)->capture_default_str()->check(one_of(names));
  cmd.add_option("--sampler-program", flags.program_file,
                 "sample with the sampler program in this JSON file (its hop's steps over the "
                 "bulk matrix operations; sampler/program/examples/, Python's "
                 "bulkgnn.define_sampler) in place of --sampler")
      ->check(non_empty_path())
      ->excludes(sampler);
  for (const auto& p : sampler::all_sampler_parameters()) {
    const std::string name(p.name);
    cmd.add_option_function<std::int64_t>(
           flag_of(p.name), [&flags, name](std::int64_t value) { flags.parameters[name] = value; },
           fmt::format("{} (default {}; {} only)", p.help, p.default_value,
                       fmt::join(samplers_taking(p.name), ", ")))
        ->check(integer_in(p.min, p.max));
  }
  cmd.add_option("--subgraph-cache", flags.cache_dir,
                 "keep what a sampler prepares from the whole graph once (cluster-gcn's METIS "
                 "clusters, saint-*'s presampled normalisation counts) in this directory, named "
                 "after the graph and the sampler's options, and reuse it on later runs (PyG's "
                 "save_dir)")
      ->check(non_empty_path());
}

std::string canonical_sampler(const sampler_flags& flags) {
  if (!flags.program_file.empty()) return program_of(flags.program_file).name;
  return std::string(sampler::find_sampler(flags.name).name);
}

std::map<std::string, std::int64_t, std::less<>> sampler_parameters(const sampler_flags& flags) {
  const auto& entry = sampler::find_sampler(canonical_sampler(flags));
  for (const auto& [name, value] : flags.parameters)
    BULKGNN_EXPECTS(std::ranges::find(entry.parameters, name, &sampler::sampler_parameter::name) !=
                        entry.parameters.end(),
                    "{}: the {} sampler takes no such parameter (it applies to {})", flag_of(name),
                    entry.name, fmt::join(samplers_taking(name), ", "));
  return flags.parameters;
}

std::vector<std::string> given_parameter_flags(const sampler_flags& flags) {
  std::vector<std::string> given;
  for (const auto& [name, value] : flags.parameters) given.push_back(flag_of(name));
  if (!flags.cache_dir.empty()) given.emplace_back("--subgraph-cache");
  if (!flags.program_file.empty()) given.emplace_back("--sampler-program");
  return given;
}

std::vector<session::setting> sampler_settings(const sampler_flags& flags) {
  std::vector<session::setting> settings{
      {"--sampler", canonical_sampler(flags)},
      {"--sampler-program", flags.program_file.empty()
                                ? std::string("none")
                                : program_digest(program_of(flags.program_file))}};
  for (const auto& p : sampler::all_sampler_parameters()) {
    const auto given = flags.parameters.find(p.name);
    settings.push_back({flag_of(p.name), given == flags.parameters.end()
                                             ? std::string("default")
                                             : std::to_string(given->second)});
  }
  return settings;
}

std::string fanouts_help() {
  std::string per_destination, per_minibatch, subgraphs;
  for (const auto& entry : sampler::sampler_table()) {
    auto& list = entry.batches_subgraphs()                               ? subgraphs
                 : entry.fanout == sampler::fanout_unit::per_destination ? per_destination
                                                                         : per_minibatch;
    list += fmt::format("{}{}", list.empty() ? "" : ", ", entry.name);
  }
  return fmt::format(
      "per hop from the seeds: draws per frontier vertex ({}; sage: -1 = all) or vertices per "
      "minibatch ({}); -1 per layer for {}, every layer on all edges of a minibatch's subgraph",
      per_destination, per_minibatch, subgraphs);
}

}  // namespace bulkgnn::tools
