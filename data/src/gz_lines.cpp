#include "gz_lines.hpp"

#include <cerrno>
#include <limits>

namespace bulkgnn::data::detail {

namespace {

constexpr unsigned zlib_buffer_bytes = 1u << 20;
constexpr std::size_t line_buffer_bytes = std::size_t{1} << 22;

// gzerror prefixes its message with the path, which data_error adds anyway.
std::string zlib_reason(gzFile gz, const std::string& file, int& code) {
  std::string message = gzerror(gz, &code);
  if (message.starts_with(file + ": ")) message.erase(0, file.size() + 2);
  return message;
}

}  // namespace

gz_lines::gz_lines(const std::filesystem::path& path)
    : file_(path.string()), buffer_(line_buffer_bytes) {
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec)) throw data_error(file_, "missing");
  gz_ = gzopen(path.c_str(), "rb");
  if (gz_ == nullptr) throw data_error(file_, fmt::format("cannot open: {}", std::strerror(errno)));
  gzbuffer(gz_, zlib_buffer_bytes);
  // zlib would silently pass a file without a gzip header through as text.
  if (gzdirect(gz_) != 0) {
    gzclose(gz_);
    throw data_error(file_, "not a gzip file");
  }
}

gz_lines::~gz_lines() { gzclose(gz_); }

std::int64_t gz_lines::compressed_offset() const { return gzoffset(gz_); }

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
  if (end_ == buffer_.size()) buffer_.resize(2 * buffer_.size());
  const auto want = static_cast<unsigned>(
      std::min<std::size_t>(buffer_.size() - end_, std::numeric_limits<int>::max()));
  const int got = gzread(gz_, buffer_.data() + end_, want);
  if (got < 0) {
    int code = Z_OK;
    const std::string reason = zlib_reason(gz_, file_, code);
    throw data_error(file_, line_ + 1, fmt::format("corrupt gzip data ({})", reason));
  }
  if (got == 0) {
    eof_ = true;
    check_clean_end();
    return false;
  }
  end_ += static_cast<std::size_t>(got);
  return true;
}

// gzread reports a stream cut short as a plain end of file; only gzerror
// tells it apart from a complete one.
void gz_lines::check_clean_end() {
  int code = Z_OK;
  const std::string reason = zlib_reason(gz_, file_, code);
  if (code == Z_BUF_ERROR)
    throw data_error(file_, line_ + 1, fmt::format("truncated gzip file ({})", reason));
  if (code != Z_OK)
    throw data_error(file_, line_ + 1, fmt::format("corrupt gzip data ({})", reason));
}

}  // namespace bulkgnn::data::detail
