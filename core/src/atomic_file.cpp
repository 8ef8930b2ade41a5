#include "bulkgnn/core/atomic_file.hpp"

#include "bulkgnn/core/error.hpp"

#include <unistd.h>

namespace bulkgnn {

atomic_output_file::atomic_output_file(std::filesystem::path path) : path_(std::move(path)) {
  temporary_ = path_;
  temporary_ += fmt::format(".tmp-{}", ::getpid());
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
  stream_.close();
  if (!written || stream_.fail()) throw data_error(path_.string(), "write failed");
  std::error_code ec;
  std::filesystem::rename(temporary_, path_, ec);
  if (ec) throw data_error(path_.string(), "cannot rename into place: " + ec.message());
  committed_ = true;
}

void write_file_atomically(const std::filesystem::path& path, const std::string& content) {
  atomic_output_file file(path);
  file.stream() << content;
  file.commit();
}

}  // namespace bulkgnn
