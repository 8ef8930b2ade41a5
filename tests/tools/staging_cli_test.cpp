// End-to-end tests of what `bulkgnn` leaves behind when it cannot finish: a
// full disk (or a file-size limit) during convert and on-the-fly import, a
// SIGINT or SIGTERM in the middle of either, and the staging of a run that was
// killed outright, which the next run sweeps.
#include "run_command.hpp"
#include "scratch_dir.hpp"

#include "bulkgnn/core/staging.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <optional>
#include <ostream>
#include <string>
#include <thread>
#include <vector>

namespace {

namespace fs = std::filesystem;
using bulkgnn::testing::run_command;
using bulkgnn::testing::run_result;
using bulkgnn::testing::scratch_dir;
using namespace std::chrono_literals;

const fs::path shared_data = BULKGNN_SHARED_DATA;
const std::string cli = BULKGNN_CLI;

std::vector<std::string> entries_of(const fs::path& dir) {
  std::vector<std::string> names;
  for (const auto& e : fs::directory_iterator(dir)) names.push_back(e.path().filename().string());
  return names;
}

std::string joined(const std::vector<std::string>& names) {
  return names.empty() ? "(nothing)" : fmt::format("{}", fmt::join(names, ", "));
}

// Runs `command` with a 2 MiB limit on the size of any file it writes, and
// SIGXFSZ ignored so that a write past it fails with EFBIG as it would with
// ENOSPC on a full disk. Needs no privileges, so it runs on every machine.
run_result run_with_file_size_limit(const std::string& command) {
  return run_command(fmt::format("bash -c \"trap '' XFSZ; ulimit -f 2048; exec {}\"", command));
}

void expect_dataset(const fs::path& dir) {
  ASSERT_TRUE(fs::exists(shared_data / dir / "raw" / "edge.csv.gz"))
      << "dataset missing: " << shared_data / dir;
}

TEST(FullDisk, ConvertNamesTheFileAndLeavesNoStaging) {
  expect_dataset("cora");
  const scratch_dir scratch;
  const auto result = run_with_file_size_limit(fmt::format("{} convert --quiet {} {}", cli,
                                                           (shared_data / "cora").string(),
                                                           (scratch / "out").string()));
  EXPECT_EQ(result.exit_code, 1) << result.output;
  EXPECT_NE(result.output.find("features.npy"), std::string::npos) << result.output;
  EXPECT_NE(result.output.find("File too large"), std::string::npos) << result.output;
  EXPECT_TRUE(entries_of(scratch.path()).empty()) << joined(entries_of(scratch.path()));
}

TEST(FullDisk, OnTheFlyImportNamesTheFileAndLeavesNoStaging) {
  expect_dataset("cora");
  const scratch_dir scratch;
  const auto result = run_with_file_size_limit(fmt::format(
      "env TMPDIR={} {} info {}", scratch.path().string(), cli, (shared_data / "cora").string()));
  EXPECT_EQ(result.exit_code, 1) << result.output;
  EXPECT_NE(result.output.find("features.npy"), std::string::npos) << result.output;
  EXPECT_TRUE(entries_of(scratch.path()).empty()) << joined(entries_of(scratch.path()));
}

// A real full disk needs a small filesystem: a tmpfs mounted in a user and
// mount namespace of our own, where the kernel and the container allow it.
TEST(FullDisk, ConvertOnARealFullFilesystem) {
  expect_dataset("cora");
  if (run_command("unshare -rm true").exit_code != 0)
    GTEST_SKIP() << "cannot create a mount namespace here (unshare -rm), so no small tmpfs";
  const scratch_dir scratch;
  const auto small = scratch / "small";
  fs::create_directories(small);
  const auto result = run_command(fmt::format(
      "unshare -rm sh -c 'mount -t tmpfs -o size=4m tmpfs {0} && {1} convert --quiet {2} {0}/out; "
      "rc=$?; echo \"left: $(ls -A {0})\"; exit $rc'",
      small.string(), cli, (shared_data / "cora").string()));
  EXPECT_EQ(result.exit_code, 1) << result.output;
  EXPECT_NE(result.output.find("No space left on device"), std::string::npos) << result.output;
  EXPECT_NE(result.output.find(".npy"), std::string::npos) << result.output;
  EXPECT_NE(result.output.find("left: \n"), std::string::npos) << result.output;
}

// A child process with SIGINT and SIGTERM at their defaults (a test runner or
// a background shell may ignore them, and ignored signals stay ignored across
// exec), its output in `log`.
class child_process {
 public:
  child_process(const std::vector<std::string>& args, const fs::path& tmpdir, const fs::path& log) {
    pid_ = ::fork();
    if (pid_ != 0) return;
    ::signal(SIGINT, SIG_DFL);
    ::signal(SIGTERM, SIG_DFL);
    ::setenv("TMPDIR", tmpdir.c_str(), 1);
    if (std::FILE* out = std::freopen(log.c_str(), "w", stdout); out != nullptr)
      ::dup2(::fileno(stdout), STDERR_FILENO);
    std::vector<char*> argv;
    for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    ::execv(argv[0], argv.data());
    ::_exit(127);
  }
  child_process(const child_process&) = delete;
  child_process& operator=(const child_process&) = delete;
  ~child_process() {
    if (pid_ > 0 && !exit_code_) {
      ::kill(pid_, SIGKILL);
      ::waitpid(pid_, nullptr, 0);
    }
  }

  [[nodiscard]] pid_t pid() const { return pid_; }
  [[nodiscard]] bool running() {
    poll();
    return !exit_code_;
  }
  void send(int signal_number) const { ::kill(pid_, signal_number); }

  // The exit code (128 + signal for a death by signal), or nothing if the
  // child is still running after `limit`.
  std::optional<int> wait_for_exit(std::chrono::seconds limit) {
    const auto deadline = std::chrono::steady_clock::now() + limit;
    while (running() && std::chrono::steady_clock::now() < deadline)
      std::this_thread::sleep_for(20ms);
    return exit_code_;
  }

 private:
  void poll() {
    int status = 0;
    if (exit_code_ || ::waitpid(pid_, &status, WNOHANG) != pid_) return;
    exit_code_ = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  }

  pid_t pid_ = -1;
  std::optional<int> exit_code_;
};

// Waits until `dir` holds an entry whose name starts with `prefix`.
bool staging_appears(const fs::path& dir, const std::string& prefix, child_process& child) {
  const auto deadline = std::chrono::steady_clock::now() + 60s;
  while (child.running() && std::chrono::steady_clock::now() < deadline) {
    for (const auto& name : entries_of(dir))
      if (name.starts_with(prefix)) return true;
    std::this_thread::sleep_for(5ms);
  }
  return false;
}

std::string read_file(const fs::path& path) {
  std::ifstream in(path);
  return {std::istreambuf_iterator<char>(in), {}};
}

struct interruption {
  int signal_number;
  int exit_code;
  const char* name;

  friend std::ostream& operator<<(std::ostream& out, const interruption& i) {
    return out << i.name;
  }
};

class Interrupted : public ::testing::TestWithParam<interruption> {};

// coauthor-cs has 18 MB of compressed features: the import takes seconds,
// ample time to be interrupted in the middle of it.
TEST_P(Interrupted, ConvertUnwindsItsStagingAndExitsWith128PlusTheSignal) {
  expect_dataset("coauthor-cs");
  const scratch_dir scratch;
  const auto out = scratch / "out";
  child_process child(
      {cli, "convert", "--quiet", (shared_data / "coauthor-cs").string(), out.string()},
      scratch.path(), scratch / "log");
  const std::string staging_prefix = bulkgnn::staging_name(".out.tmp-", child.pid());
  ASSERT_TRUE(staging_appears(scratch.path(), staging_prefix, child))
      << "no staging directory appeared: " << read_file(scratch / "log");
  child.send(GetParam().signal_number);
  const auto exit_code = child.wait_for_exit(60s);
  ASSERT_TRUE(exit_code.has_value()) << "still running 60 s after " << GetParam().name;
  EXPECT_EQ(*exit_code, GetParam().exit_code) << read_file(scratch / "log");
  EXPECT_NE(read_file(scratch / "log").find(GetParam().name), std::string::npos);
  fs::remove(scratch / "log");
  EXPECT_TRUE(entries_of(scratch.path()).empty()) << joined(entries_of(scratch.path()));
}

TEST_P(Interrupted, OnTheFlyImportUnwindsItsStagingAndExitsWith128PlusTheSignal) {
  expect_dataset("coauthor-cs");
  const scratch_dir scratch;
  const auto tmpdir = scratch / "tmp";
  fs::create_directories(tmpdir);
  child_process child({cli, "info", (shared_data / "coauthor-cs").string()}, tmpdir,
                      scratch / "log");
  ASSERT_TRUE(staging_appears(tmpdir, bulkgnn::staging_name("bulkgnn-import-", child.pid()), child))
      << "no staging directory appeared: " << read_file(scratch / "log");
  child.send(GetParam().signal_number);
  const auto exit_code = child.wait_for_exit(60s);
  ASSERT_TRUE(exit_code.has_value()) << "still running 60 s after " << GetParam().name;
  EXPECT_EQ(*exit_code, GetParam().exit_code) << read_file(scratch / "log");
  EXPECT_TRUE(entries_of(tmpdir).empty()) << joined(entries_of(tmpdir));
}

INSTANTIATE_TEST_SUITE_P(BySignal, Interrupted,
                         ::testing::Values(interruption{SIGINT, 130, "SIGINT"},
                                           interruption{SIGTERM, 143, "SIGTERM"}),
                         [](const auto& info) { return std::string(info.param.name); });

// The pid of a process that has ended (and been reaped), as a killed run's
// staging names would carry.
pid_t pid_of_an_ended_process() {
  const pid_t pid = ::fork();
  if (pid == 0) ::_exit(0);
  ::waitpid(pid, nullptr, 0);
  return pid;
}

void make_staging(const fs::path& dir) {
  fs::create_directories(dir);
  std::ofstream(dir / "features.npy") << "half-written";
}

TEST(StaleStaging, TheNextConvertSweepsWhatAKilledRunLeftAndSparesLiveRuns) {
  expect_dataset("cora");
  const scratch_dir scratch;
  const pid_t dead = pid_of_an_ended_process();
  const auto stale = scratch / (bulkgnn::staging_name(".out.tmp-", dead) + "-Ab12Cd");
  const auto live = scratch / (bulkgnn::staging_name(".out.tmp-", ::getpid()) + "-Ef34Gh");
  const auto unrelated = scratch / (bulkgnn::staging_name(".other.tmp-", dead) + "-Ij56Kl");
  // The same process id on another node sharing the directory: not ours to judge.
  const auto other_host = scratch / fmt::format(".out.tmp-{}-0badc0de-Mn78Op", dead);
  for (const auto& dir : {stale, live, unrelated, other_host}) make_staging(dir);
  const auto result =
      run_command(fmt::format("{} convert --quiet {} {}", cli, (shared_data / "cora").string(),
                              (scratch / "out").string()));
  ASSERT_EQ(result.exit_code, 0) << result.output;
  EXPECT_FALSE(fs::exists(stale));
  EXPECT_TRUE(fs::exists(live));
  EXPECT_TRUE(fs::exists(unrelated));
  EXPECT_TRUE(fs::exists(other_host));
}

TEST(StaleStaging, TheNextImportSweepsWhatAKilledImportLeft) {
  expect_dataset("cora");
  const scratch_dir scratch;
  const auto stale =
      scratch / (bulkgnn::staging_name("bulkgnn-import-", pid_of_an_ended_process()) + "-Ab12Cd");
  make_staging(stale);
  const auto result = run_command(fmt::format("env TMPDIR={} {} info {}", scratch.path().string(),
                                              cli, (shared_data / "cora").string()));
  ASSERT_EQ(result.exit_code, 0) << result.output;
  EXPECT_TRUE(entries_of(scratch.path()).empty()) << joined(entries_of(scratch.path()));
}

}  // namespace
