#include "bulkgnn/core/atomic_file.hpp"

#include "bulkgnn/core/error.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

namespace bulkgnn {
namespace {

std::filesystem::path scratch_dir() {
  auto dir =
      std::filesystem::temp_directory_path() /
      ("bulkgnn-core-test-" + std::to_string(::testing::UnitTest::GetInstance()->random_seed()));
  std::filesystem::create_directories(dir);
  return dir;
}

std::string read(const std::filesystem::path& p) {
  std::ifstream in(p);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

TEST(AtomicOutputFile, CommitReplacesTheOldContent) {
  const auto path = scratch_dir() / "replace.txt";
  write_file_atomically(path, "old");
  write_file_atomically(path, "new");
  EXPECT_EQ(read(path), "new");
}

TEST(AtomicOutputFile, AnAbandonedFileLeavesTheOldContentAndNoTemporary) {
  const auto dir = scratch_dir() / "abandon";
  std::filesystem::create_directories(dir);
  const auto path = dir / "out.txt";
  write_file_atomically(path, "old");
  {
    atomic_output_file file(path);
    file.stream() << "half";
  }
  EXPECT_EQ(read(path), "old");
  EXPECT_EQ(std::distance(std::filesystem::directory_iterator(dir), {}), 1);
}

TEST(AtomicOutputFile, AnUnwritableDirectoryIsADataError) {
  EXPECT_THROW(write_file_atomically("/nonexistent-dir/x.json", "x"), data_error);
}

}  // namespace
}  // namespace bulkgnn
