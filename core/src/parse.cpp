#include "bulkgnn/core/parse.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>

#include "bulkgnn/core/error.hpp"

namespace bulkgnn {

std::vector<std::int64_t> parse_int_list(const std::string& text, const std::string& option) {
  std::vector<std::int64_t> values;
  std::size_t start = 0;
  while (start <= text.size()) {
    const auto end = std::min(text.find(',', start), text.size());
    std::int64_t value = 0;
    const char* first = text.data() + start;
    const char* last = text.data() + end;
    const auto [ptr, ec] = std::from_chars(first, last, value);
    if (ec != std::errc() || ptr != last)
      throw option_error(
          fmt::format("{}: '{}' is not a comma-separated list of integers", option, text));
    values.push_back(value);
    start = end + 1;
  }
  return values;
}

}  // namespace bulkgnn
