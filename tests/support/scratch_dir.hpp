#pragma once

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <string>

namespace bulkgnn::testing {

// A fresh directory per test (named after the test and the process), removed
// afterwards.
class scratch_dir {
 public:
  explicit scratch_dir(const std::string& prefix = "bulkgnn_test")
      : path_(std::filesystem::temp_directory_path() /
              fmt::format("{}_{}_{}", prefix, ::getpid(),
                          ::testing::UnitTest::GetInstance()->current_test_info()->name())) {
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
  std::filesystem::path path_;
};

}  // namespace bulkgnn::testing
