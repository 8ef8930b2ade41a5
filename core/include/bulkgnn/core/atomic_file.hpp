#pragma once

#include <filesystem>
#include <fstream>
#include <string>

namespace bulkgnn {

// An output file that appears at its path only once complete: writes go to a
// temporary sibling, commit() flushes and renames it into place, and an
// uncommitted file is removed on destruction, so a failure midway never
// leaves a truncated or half-old file behind.
class atomic_output_file {
 public:
  explicit atomic_output_file(std::filesystem::path path);
  ~atomic_output_file();
  atomic_output_file(const atomic_output_file&) = delete;
  atomic_output_file& operator=(const atomic_output_file&) = delete;

  [[nodiscard]] std::ofstream& stream() { return stream_; }
  void commit();

 private:
  std::filesystem::path path_;
  std::filesystem::path temporary_;
  std::ofstream stream_;
  bool committed_ = false;
};

// Writes `content` to `path` through an atomic_output_file.
void write_file_atomically(const std::filesystem::path& path, const std::string& content);

}  // namespace bulkgnn
