#pragma once

#include <stdlib.h>

#include <cstdint>
#include <cstdio>
#include <exception>
#include <filesystem>
#include <fstream>
#include <string>
#include <string_view>

#include "bulkgnn/core/error.hpp"

namespace bulkgnn::fuzz {

// A fresh directory in TMPDIR for one fuzz input, removed with everything in
// it when the input is done.
class scratch_dir {
 public:
  scratch_dir() {
    std::string pattern = (std::filesystem::temp_directory_path() / "bulkgnn-fuzz-XXXXXX").string();
    if (::mkdtemp(pattern.data()) == nullptr) {
      std::perror("bulkgnn fuzzer: mkdtemp in TMPDIR");
      std::abort();
    }
    path_ = pattern;
  }
  ~scratch_dir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  scratch_dir(const scratch_dir&) = delete;
  scratch_dir& operator=(const scratch_dir&) = delete;

  [[nodiscard]] const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

inline void write_file(const std::filesystem::path& path, std::string_view bytes) {
  std::filesystem::create_directories(path.parent_path());
  std::ofstream(path, std::ios::binary | std::ios::trunc)
      .write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

inline std::string_view as_text(const std::uint8_t* data, std::size_t size) {
  return {reinterpret_cast<const char*>(data), size};
}

// Runs one input through a reader. Rejecting the input with a bulkgnn::error
// is the reader doing its job; an internal_error (a broken invariant), any
// other exception, a crash or a sanitizer report is a finding, and so it
// escapes to libFuzzer, which saves the input.
template <class F>
void expect_clean_outcome(F&& read) {
  try {
    read();
  } catch (const bulkgnn::internal_error&) {
    throw;
  } catch (const bulkgnn::error&) {
  }
}

}  // namespace bulkgnn::fuzz
