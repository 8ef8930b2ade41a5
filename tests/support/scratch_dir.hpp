#pragma once

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cctype>
#include <filesystem>
#include <string>
#include <utility>

namespace bulkgnn::testing {

// A fresh directory per test in the temporary directory ($TMPDIR), named
// after the process, the test suite and the test, removed afterwards.
class scratch_dir {
 public:
  explicit scratch_dir(const std::string& prefix = "bulkgnn_test")
      : scratch_dir(std::filesystem::temp_directory_path() / unique_name(prefix)) {}
  ~scratch_dir() { std::filesystem::remove_all(path_); }
  scratch_dir(const scratch_dir&) = delete;
  scratch_dir& operator=(const scratch_dir&) = delete;

  [[nodiscard]] const std::filesystem::path& path() const { return path_; }
  [[nodiscard]] std::filesystem::path operator/(const std::string& name) const {
    return path_ / name;
  }

 private:
  friend const std::filesystem::path& process_scratch_dir();

  explicit scratch_dir(std::filesystem::path path) : path_(std::move(path)) {
    std::filesystem::remove_all(path_);
    std::filesystem::create_directories(path_);
  }

  // One path component: parameterised tests' names hold '/'
  // ("Layouts/SampleOnEveryGrid"), which would otherwise create a parent
  // directory that removing the scratch directory leaves behind.
  static std::string unique_name(const std::string& prefix) {
    const auto* test = ::testing::UnitTest::GetInstance()->current_test_info();
    std::string name =
        fmt::format("{}_{}_{}_{}", prefix, ::getpid(), test->test_suite_name(), test->name());
    for (char& c : name)
      if (!std::isalnum(static_cast<unsigned char>(c)) && c != '-') c = '_';
    return name;
  }

  std::filesystem::path path_;
};

// A scratch directory for the whole test process, for what outlives one
// test (a suite's SetUpTestSuite output): removed when the process exits
// normally. ctest runs each discovered test in its own process, and under
// MPI every rank is a process of its own, so each removes what it made.
inline const std::filesystem::path& process_scratch_dir() {
  static const scratch_dir dir(std::filesystem::temp_directory_path() /
                               fmt::format("bulkgnn_test_process_{}", ::getpid()));
  return dir.path();
}

}  // namespace bulkgnn::testing
