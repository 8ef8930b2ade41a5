#pragma once

#include <cstdint>
#include <cstring>
#include <filesystem>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "bulkgnn/core/error.hpp"

namespace bulkgnn::data::detail {

// Reads a gzip file line by line, much faster than gzgets: a background
// thread inflates large chunks ahead while the caller parses, since inflating
// and parsing cost about the same. Every failure, including a stream that
// stops before its gzip trailer, throws data_error naming the file and line.
class gz_lines {
 public:
  explicit gz_lines(const std::filesystem::path& path);
  ~gz_lines();
  gz_lines(const gz_lines&) = delete;
  gz_lines& operator=(const gz_lines&) = delete;

  // The next line without its "\n" or "\r\n"; false after the last one. The
  // view stays valid until the following call.
  bool next(std::string_view& line) {
    const char* begin = buffer_.data() + begin_;
    const auto* newline = static_cast<const char*>(std::memchr(begin, '\n', end_ - begin_));
    if (newline == nullptr) return next_after_refill(line);
    begin_ += static_cast<std::size_t>(newline - begin) + 1;
    return emit(line, begin, newline);
  }

  // The 1-based number of the line last returned.
  [[nodiscard]] std::int64_t line_number() const { return line_; }
  [[nodiscard]] const std::string& file() const { return file_; }
  // Bytes of the compressed file consumed so far, for progress displays.
  [[nodiscard]] std::int64_t compressed_offset() const;

  [[noreturn]] void fail(const std::string& reason) const {
    throw data_error(file_, line_, reason);
  }

 private:
  bool emit(std::string_view& line, const char* begin, const char* end) {
    if (end != begin && end[-1] == '\r') --end;
    line = {begin, static_cast<std::size_t>(end - begin)};
    ++line_;
    return true;
  }
  bool next_after_refill(std::string_view& line);
  bool refill();

  class inflater;  // the background thread, defined in gz_lines.cpp

  std::string file_;
  std::unique_ptr<inflater> inflater_;
  std::vector<char> buffer_;
  std::size_t begin_ = 0;
  std::size_t end_ = 0;
  bool eof_ = false;
  std::int64_t line_ = 0;
};

}  // namespace bulkgnn::data::detail
