#include "bulkgnn/core/staging.hpp"

#include <fmt/format.h>
#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <optional>

namespace bulkgnn {
namespace {

// The owner's pid in "<prefix><pid>[-...]", or nothing if `name` is not so formed.
std::optional<pid_t> staging_owner(std::string_view name, std::string_view prefix) {
  if (!name.starts_with(prefix)) return std::nullopt;
  name.remove_prefix(prefix.size());
  pid_t pid = 0;
  const auto [end, ec] = std::from_chars(name.data(), name.data() + name.size(), pid);
  if (ec != std::errc() || pid <= 0) return std::nullopt;
  if (end != name.data() + name.size() && *end != '-') return std::nullopt;
  return pid;
}

bool process_is_gone(pid_t pid) { return ::kill(pid, 0) != 0 && errno == ESRCH; }

}  // namespace

std::string staging_name(std::string_view prefix) {
  return fmt::format("{}{}", prefix, ::getpid());
}

void sweep_stale_staging(const std::filesystem::path& dir, std::string_view prefix) {
  std::error_code ec;
  for (auto it = std::filesystem::directory_iterator(dir, ec);
       !ec && it != std::filesystem::directory_iterator(); it.increment(ec)) {
    const auto owner = staging_owner(it->path().filename().string(), prefix);
    std::error_code ignored;
    if (owner && process_is_gone(*owner)) std::filesystem::remove_all(it->path(), ignored);
  }
}

}  // namespace bulkgnn
