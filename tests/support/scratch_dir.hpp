#pragma once

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <string>

namespace bulkgnn::testing {

// A fresh directory per test (named after the process, the test suite and
// the test), removed afterwards.
class scratch_dir {
 public:
  explicit scratch_dir(const std::string& prefix = "bulkgnn_test")
      : path_(std::filesystem::temp_directory_path() / unique_name(prefix)) {
    std::filesystem::remove_all(path_);
    std::filesystem::create_directories(path_);
  }
  ~scratch_dir() { std::filesystem::remove_all(path_); }
  scratch_dir(const scratch_dir&) = delete;
  scratch_dir& operator=(const scratch_dir&) = delete;

  [[nodiscard]] const std::filesystem::path& path() const { return path_; }
  [[nodiscard]] std::filesystem::path operator/(const std::string& name) const {
    return path_ / name;
  }

 private:
  static std::string unique_name(const std::string& prefix) {
    const auto* test = ::testing::UnitTest::GetInstance()->current_test_info();
    return fmt::format("{}_{}_{}_{}", prefix, ::getpid(), test->test_suite_name(), test->name());
  }

  std::filesystem::path path_;
};

}  // namespace bulkgnn::testing
