#include "bulkgnn/core/input_file.hpp"

#include <fmt/format.h>

#include <system_error>

namespace bulkgnn {

std::string not_a_regular_file(const std::filesystem::path& path) {
  namespace fs = std::filesystem;
  std::error_code ec;
  const auto status = fs::status(path, ec);
  if (ec && ec != std::errc::no_such_file_or_directory)
    return fmt::format("cannot be resolved: {}", ec.message());
  switch (status.type()) {
    case fs::file_type::regular:
    case fs::file_type::not_found:
      return {};
    case fs::file_type::directory:
      return "is a directory, not a file";
    case fs::file_type::fifo:
      return "is a named pipe, not a regular file";
    case fs::file_type::socket:
      return "is a socket, not a regular file";
    case fs::file_type::block:
    case fs::file_type::character:
      return "is a device, not a regular file";
    default:
      return "is not a regular file";
  }
}

}  // namespace bulkgnn
