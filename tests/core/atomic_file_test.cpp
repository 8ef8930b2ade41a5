#include "bulkgnn/core/atomic_file.hpp"

#include "bulkgnn/core/error.hpp"
#include "bulkgnn/core/staging.hpp"
#include "scratch_dir.hpp"

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

namespace bulkgnn {
namespace {

using testing::scratch_dir;

std::string read(const std::filesystem::path& p) {
  std::ifstream in(p);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

TEST(AtomicOutputFile, CommitReplacesTheOldContent) {
  const scratch_dir scratch;
  const auto path = scratch / "replace.txt";
  write_file_atomically(path, "old");
  write_file_atomically(path, "new");
  EXPECT_EQ(read(path), "new");
}

TEST(AtomicOutputFile, AnAbandonedFileLeavesTheOldContentAndNoTemporary) {
  const scratch_dir scratch;
  const auto& dir = scratch.path();
  const auto path = dir / "out.txt";
  write_file_atomically(path, "old");
  {
    atomic_output_file file(path);
    file.stream() << "half";
  }
  EXPECT_EQ(read(path), "old");
  EXPECT_EQ(std::distance(std::filesystem::directory_iterator(dir), {}), 1);
}

// A save killed outright (SIGKILL, power loss) leaves its temporary behind;
// the next save of the same file removes it unless its owner still runs.
TEST(AtomicOutputFile, ASaveSweepsTheTemporaryOfAKilledSave) {
  const scratch_dir scratch;
  const pid_t ended = ::fork();
  if (ended == 0) ::_exit(0);
  ::waitpid(ended, nullptr, 0);
  const auto stale = scratch / staging_name("checkpoint.bin.tmp-", ended);
  const auto live = scratch / staging_name("checkpoint.bin.tmp-", ::getppid());
  std::ofstream(stale) << "half";
  std::ofstream(live) << "in progress";
  write_file_atomically(scratch / "checkpoint.bin", "whole");
  EXPECT_FALSE(std::filesystem::exists(stale));
  EXPECT_TRUE(std::filesystem::exists(live));
  EXPECT_EQ(read(scratch / "checkpoint.bin"), "whole");
}

TEST(AtomicOutputFile, AnUnwritableDirectoryIsADataError) {
  EXPECT_THROW(write_file_atomically("/nonexistent-dir/x.json", "x"), data_error);
}

}  // namespace
}  // namespace bulkgnn
