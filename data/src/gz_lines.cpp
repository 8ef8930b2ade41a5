#include "gz_lines.hpp"

#include <zlib.h>

#include <atomic>
#include <cerrno>
#include <condition_variable>
#include <deque>
#include <mutex>
#include <thread>

namespace bulkgnn::data::detail {

namespace {

constexpr unsigned zlib_buffer_bytes = 1u << 20;
constexpr std::size_t chunk_bytes = std::size_t{1} << 22;
constexpr int chunks_in_flight = 3;

// gzerror prefixes its message with the path, which data_error adds anyway.
std::string zlib_reason(gzFile gz, const std::string& file, int& code) {
  std::string message = gzerror(gz, &code);
  if (message.starts_with(file + ": ")) message.erase(0, file.size() + 2);
  return message;
}

}  // namespace

// Inflates the file into a few recycled chunks on its own thread. A failure
// is delivered after the chunks read before it, so line numbers stay right.
class gz_lines::inflater {
 public:
  struct chunk {
    std::vector<char> data;
    std::size_t size = 0;
  };

  inflater(gzFile gz, std::string file) : gz_(gz), file_(std::move(file)) {
    for (int i = 0; i < chunks_in_flight; ++i) free_.push_back({std::vector<char>(chunk_bytes), 0});
    thread_ = std::thread([this] { run(); });
  }
  ~inflater() {
    {
      const std::lock_guard lock(mutex_);
      stop_ = true;
    }
    changed_.notify_all();
    thread_.join();
    gzclose(gz_);
  }
  inflater(const inflater&) = delete;
  inflater& operator=(const inflater&) = delete;

  // The next chunk; false at the end of the data, with `failure` set if the
  // stream was corrupt or truncated.
  bool pop(chunk& c, std::string& failure) {
    std::unique_lock lock(mutex_);
    changed_.wait(lock, [&] { return !full_.empty() || finished_; });
    if (full_.empty()) {
      failure = failure_;
      return false;
    }
    c = std::move(full_.front());
    full_.pop_front();
    return true;
  }
  void recycle(chunk&& c) {
    {
      const std::lock_guard lock(mutex_);
      free_.push_back(std::move(c));
    }
    changed_.notify_all();
  }
  [[nodiscard]] std::int64_t offset() const { return offset_.load(std::memory_order_relaxed); }

 private:
  void run() {
    for (;;) {
      chunk c;
      {
        std::unique_lock lock(mutex_);
        changed_.wait(lock, [&] { return stop_ || !free_.empty(); });
        if (stop_) return;
        c = std::move(free_.back());
        free_.pop_back();
      }
      const int got = gzread(gz_, c.data.data(), static_cast<unsigned>(c.data.size()));
      offset_.store(gzoffset(gz_), std::memory_order_relaxed);
      c.size = got > 0 ? static_cast<std::size_t>(got) : 0;
      const std::string failure = got > 0 ? std::string() : end_failure(got);
      {
        const std::lock_guard lock(mutex_);
        if (got > 0) full_.push_back(std::move(c));
        finished_ = got <= 0;
        failure_ = failure;
      }
      changed_.notify_all();
      if (got <= 0) return;
    }
  }

  // gzread reports a stream cut short as a plain end of file; only gzerror
  // tells it apart from a complete one.
  std::string end_failure(int got) const {
    int code = Z_OK;
    const std::string reason = zlib_reason(gz_, file_, code);
    if (got == 0 && code == Z_OK) return {};
    if (code == Z_BUF_ERROR) return fmt::format("truncated gzip file ({})", reason);
    return fmt::format("corrupt gzip data ({})", reason);
  }

  gzFile gz_;
  std::string file_;
  std::mutex mutex_;
  std::condition_variable changed_;
  std::deque<chunk> full_;
  std::vector<chunk> free_;
  bool finished_ = false;
  bool stop_ = false;
  std::string failure_;
  std::atomic<std::int64_t> offset_{0};
  std::thread thread_;
};

gz_lines::gz_lines(const std::filesystem::path& path)
    : file_(path.string()), buffer_(2 * chunk_bytes) {
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec)) throw data_error(file_, "missing");
  gzFile gz = gzopen(path.c_str(), "rb");
  if (gz == nullptr) throw data_error(file_, fmt::format("cannot open: {}", std::strerror(errno)));
  gzbuffer(gz, zlib_buffer_bytes);
  // zlib would silently pass a file without a gzip header through as text.
  if (gzdirect(gz) != 0) {
    gzclose(gz);
    throw data_error(file_, "not a gzip file");
  }
  inflater_ = std::make_unique<inflater>(gz, file_);
}

gz_lines::~gz_lines() = default;

std::int64_t gz_lines::compressed_offset() const { return inflater_->offset(); }

bool gz_lines::next_after_refill(std::string_view& line) {
  while (refill())
    if (std::memchr(buffer_.data() + begin_, '\n', end_ - begin_) != nullptr) return next(line);
  if (begin_ == end_) return false;
  // The last line has no newline.
  const char* begin = buffer_.data() + begin_;
  begin_ = end_;
  return emit(line, begin, buffer_.data() + end_);
}

bool gz_lines::refill() {
  if (eof_) return false;
  std::memmove(buffer_.data(), buffer_.data() + begin_, end_ - begin_);
  end_ -= begin_;
  begin_ = 0;
  inflater::chunk c;
  std::string failure;
  if (!inflater_->pop(c, failure)) {
    eof_ = true;
    if (!failure.empty()) throw data_error(file_, line_ + 1, failure);
    return false;
  }
  if (buffer_.size() < end_ + c.size) buffer_.resize(2 * (end_ + c.size));
  std::memcpy(buffer_.data() + end_, c.data.data(), c.size);
  end_ += c.size;
  inflater_->recycle(std::move(c));
  return true;
}

}  // namespace bulkgnn::data::detail
