#pragma once

#include <fmt/format.h>

#include <cstdint>
#include <stdexcept>
#include <string>

namespace bulkgnn {

// Base of every error bulkgnn reports to a user. The CLI prints what() on one
// line and exits non-zero.
class error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// A command-line or API option has an impossible value; what() names it.
class option_error : public error {
 public:
  using error::error;
};

// An input file is malformed; what() names the file and, where known, the line.
class data_error : public error {
 public:
  data_error(const std::string& path, const std::string& reason)
      : error(fmt::format("{}: {}", path, reason)) {}
  data_error(const std::string& path, std::int64_t line, const std::string& reason)
      : error(fmt::format("{}:{}: {}", path, line, reason)) {}
};

// A broken internal invariant: a bug in bulkgnn, not in the input.
class internal_error : public error {
 public:
  using error::error;
};

}  // namespace bulkgnn

// Checks an argument at a public entry point and throws option_error naming it.
#define BULKGNN_EXPECTS(condition, ...)                                        \
  do {                                                                         \
    if (!(condition)) throw ::bulkgnn::option_error(fmt::format(__VA_ARGS__)); \
  } while (false)

// Checks an internal invariant; a failure names the source location.
#define BULKGNN_ASSERT(condition)                                                      \
  do {                                                                                 \
    if (!(condition))                                                                  \
      throw ::bulkgnn::internal_error(                                                 \
          fmt::format("internal error at {}:{}: {}", __FILE__, __LINE__, #condition)); \
  } while (false)
