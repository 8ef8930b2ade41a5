#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace bulkgnn {

// Parses "15,10,5" into {15, 10, 5}; option_error naming `option` otherwise.
[[nodiscard]] std::vector<std::int64_t> parse_int_list(const std::string& text,
                                                       const std::string& option);

}  // namespace bulkgnn
