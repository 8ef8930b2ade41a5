#pragma once

#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <string>

namespace bulkgnn::testing {

struct run_result {
  int exit_code = -1;
  std::string output;  // stdout and stderr together
};

// Runs a shell command line; a signal death reads as 128 + the signal.
inline run_result run_command(const std::string& command_line) {
  run_result result;
  FILE* pipe = popen((command_line + " 2>&1").c_str(), "r");
  if (pipe == nullptr) return result;
  std::array<char, 4096> buffer{};
  while (fgets(buffer.data(), buffer.size(), pipe) != nullptr) result.output += buffer.data();
  const int status = pclose(pipe);
  result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  return result;
}

}  // namespace bulkgnn::testing
