#include "gz_lines.hpp"

#include "bulkgnn/core/input_file.hpp"

#include <fcntl.h>
#include <unistd.h>
#include <zlib.h>

#include <atomic>
#include <cerrno>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <mutex>
#include <thread>

namespace bulkgnn::data::detail {

namespace {

constexpr unsigned zlib_buffer_bytes = 1u << 20;
constexpr std::size_t chunk_bytes = std::size_t{1} << 22;
constexpr int chunks_in_flight = 3;

}  // namespace

// One gzip file inflated member after member, as `gzip -d` reads it. zlib's
// gzread would silently drop whatever follows the last member when it is not
// another member; here that is an error, like a truncated or corrupt member.
class gzip_stream {
 public:
  explicit gzip_stream(std::string file) : file_(std::move(file)), input_(zlib_buffer_bytes) {
    if (const auto reason = not_a_regular_file(file_); !reason.empty())
      throw data_error(file_, reason);
    fd_ = ::open(file_.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd_ < 0) throw data_error(file_, fmt::format("cannot open: {}", std::strerror(errno)));
    if (inflateInit2(&stream_, 16 + MAX_WBITS) != Z_OK) {
      ::close(fd_);
      throw data_error(file_, "cannot start zlib's inflate");
    }
    std::string failure;
    if (!fill(failure) || stream_.avail_in < 2 || input_[0] != '\x1f' || input_[1] != '\x8b') {
      close();
      throw data_error(file_, failure.empty() ? "not a gzip file" : failure);
    }
  }
  ~gzip_stream() { close(); }
  gzip_stream(const gzip_stream&) = delete;
  gzip_stream& operator=(const gzip_stream&) = delete;

  // Inflates up to `size` bytes into `out` and returns how many; fewer only
  // at the end of the file, or with `failure` set (bytes before it still count).
  std::size_t read(char* out, std::size_t size, std::string& failure) {
    stream_.next_out = reinterpret_cast<Bytef*>(out);
    stream_.avail_out = static_cast<uInt>(size);
    while (stream_.avail_out > 0 && !finished_) step(failure);
    return size - stream_.avail_out;
  }

  // Compressed bytes consumed so far.
  [[nodiscard]] std::int64_t consumed() const {
    return bytes_read_ - static_cast<std::int64_t>(stream_.avail_in);
  }

 private:
  void step(std::string& failure) {
    if (stream_.avail_in == 0) {
      if (!fill(failure)) return finish();
      if (stream_.avail_in == 0) {
        if (in_member_) failure = "truncated gzip file (it ends inside a compressed member)";
        return finish();
      }
    }
    if (!in_member_) {
      // Another member begins with the gzip magic; anything else is garbage
      // (a lone 0x1f at a buffer's end is left to inflate to judge).
      const bool magic =
          stream_.next_in[0] == 0x1f && (stream_.avail_in < 2 || stream_.next_in[1] == 0x8b);
      if (!magic) {
        failure = fmt::format("trailing garbage after the gzip data, at byte {}", consumed());
        return finish();
      }
      inflateReset(&stream_);
      in_member_ = true;
    }
    const int rc = inflate(&stream_, Z_NO_FLUSH);
    if (rc == Z_STREAM_END) in_member_ = false;
    if (rc == Z_DATA_ERROR || rc == Z_NEED_DICT || rc == Z_MEM_ERROR) {
      failure =
          fmt::format("corrupt gzip data ({})", stream_.msg != nullptr ? stream_.msg : zError(rc));
      finish();
    }
  }

  bool fill(std::string& failure) {
    ssize_t got = 0;
    do got = ::read(fd_, input_.data(), input_.size());
    while (got < 0 && errno == EINTR);
    if (got < 0) {
      failure = fmt::format("read failed: {}", std::strerror(errno));
      return false;
    }
    bytes_read_ += got;
    stream_.next_in = reinterpret_cast<Bytef*>(input_.data());
    stream_.avail_in = static_cast<uInt>(got);
    return true;
  }

  void finish() { finished_ = true; }

  void close() {
    if (fd_ < 0) return;
    inflateEnd(&stream_);
    ::close(fd_);
    fd_ = -1;
  }

  std::string file_;
  int fd_ = -1;
  z_stream stream_{};
  std::vector<char> input_;
  std::int64_t bytes_read_ = 0;
  bool in_member_ = false;
  bool finished_ = false;
};

// Inflates the file into a few recycled chunks on its own thread. A failure
// is delivered after the chunks read before it, so line numbers stay right.
class gz_lines::inflater {
 public:
  struct chunk {
    std::vector<char> data;
    std::size_t size = 0;
  };

  explicit inflater(const std::string& file) : stream_(file) {
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
      std::string failure;
      c.size = stream_.read(c.data.data(), c.data.size(), failure);
      offset_.store(stream_.consumed(), std::memory_order_relaxed);
      const bool last = c.size < c.data.size() || !failure.empty();
      {
        const std::lock_guard lock(mutex_);
        if (c.size > 0) full_.push_back(std::move(c));
        finished_ = last;
        failure_ = failure;
      }
      changed_.notify_all();
      if (last) return;
    }
  }

  gzip_stream stream_;
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
  inflater_ = std::make_unique<inflater>(file_);
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
