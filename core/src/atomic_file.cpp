#include "bulkgnn/core/atomic_file.hpp"

#include "bulkgnn/core/error.hpp"
#include "bulkgnn/core/staging.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace bulkgnn {
namespace {

// Forces a file's (or directory's) content to disk, so that a crash right
// after the rename cannot leave an empty or partial file in place.
bool sync_to_disk(const std::filesystem::path& path, int flags) {
  const int fd = ::open(path.c_str(), flags);
  if (fd < 0) return false;
  const bool synced = ::fsync(fd) == 0;
  ::close(fd);
  return synced;
}

}  // namespace

atomic_output_file::atomic_output_file(std::filesystem::path path) : path_(std::move(path)) {
  const std::string staging_prefix = path_.filename().string() + ".tmp-";
  const auto dir = path_.has_parent_path() ? path_.parent_path() : std::filesystem::path(".");
  sweep_stale_staging(dir, staging_prefix);
  temporary_ = dir / staging_name(staging_prefix);
  stream_.open(temporary_, std::ios::binary | std::ios::trunc);
  if (!stream_) throw data_error(path_.string(), "cannot open for writing");
}

atomic_output_file::~atomic_output_file() {
  if (committed_) return;
  stream_.close();
  std::error_code ignored;
  std::filesystem::remove(temporary_, ignored);
}

void atomic_output_file::commit() {
  stream_.flush();
  const bool written = static_cast<bool>(stream_);
  const int write_errno = errno;  // what a full disk reports, before close() overwrites it
  stream_.close();
  if (!written || stream_.fail())
    throw data_error(path_.string(),
                     fmt::format("write failed: {}", std::strerror(written ? errno : write_errno)));
  if (!sync_to_disk(temporary_, O_RDONLY)) throw data_error(path_.string(), "fsync failed");
  std::error_code ec;
  std::filesystem::rename(temporary_, path_, ec);
  if (ec) throw data_error(path_.string(), "cannot rename into place: " + ec.message());
  committed_ = true;
  const auto dir = path_.has_parent_path() ? path_.parent_path() : std::filesystem::path(".");
  sync_to_disk(dir, O_RDONLY | O_DIRECTORY);  // best effort: the file itself is safe
}

void write_file_atomically(const std::filesystem::path& path, const std::string& content) {
  atomic_output_file file(path);
  file.stream() << content;
  file.commit();
}

}  // namespace bulkgnn
