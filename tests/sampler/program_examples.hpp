#pragma once

#include "bulkgnn/sampler/sampler_program.hpp"

#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

namespace bulkgnn::testing {

// The text of sampler/program/examples/<file>.
inline std::string example_program_text(const std::string& file) {
  const auto path = std::filesystem::path(BULKGNN_PROGRAM_EXAMPLES) / file;
  std::ifstream in(path);
  if (!in) throw std::runtime_error("cannot read " + path.string());
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

// Registers the example programs (sage, LABOR-0, LADIES and frontier-count
// written as programs) and returns their names; registering again is harmless.
inline std::vector<std::string> register_example_programs() {
  std::vector<std::string> names;
  for (const char* file : {"sage.json", "labor.json", "ladies.json", "frontier-count.json"})
    names.emplace_back(sampler::register_sampler_program(
                           sampler::parse_sampler_program(example_program_text(file), file))
                           .name);
  return names;
}

}  // namespace bulkgnn::testing
