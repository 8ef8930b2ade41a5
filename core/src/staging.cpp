#include "bulkgnn/core/staging.hpp"

#include <fmt/format.h>
#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <cstdint>
#include <optional>

namespace bulkgnn {
namespace {

// 8 hex digits of an FNV-1a hash of the host name: short, and safe in a file name.
std::string host_tag() {
  static const std::string tag = [] {
    char host[256] = {};
    ::gethostname(host, sizeof host - 1);
    std::uint32_t hash = 2166136261u;
    for (const char* c = host; *c != '\0'; ++c)
      hash = (hash ^ static_cast<unsigned char>(*c)) * 16777619u;
    return fmt::format("{:08x}", hash);
  }();
  return tag;
}

// The owner's pid in "<prefix><pid>-<this host>[-...]", or nothing if `name`
// is not so formed or belongs to another host.
std::optional<pid_t> staging_owner(std::string_view name, std::string_view prefix) {
  if (!name.starts_with(prefix)) return std::nullopt;
  name.remove_prefix(prefix.size());
  pid_t pid = 0;
  const auto [end, ec] = std::from_chars(name.data(), name.data() + name.size(), pid);
  if (ec != std::errc() || pid <= 0) return std::nullopt;
  name.remove_prefix(static_cast<std::size_t>(end - name.data()));
  const std::string host = fmt::format("-{}", host_tag());
  if (!name.starts_with(host)) return std::nullopt;
  name.remove_prefix(host.size());
  if (!name.empty() && name.front() != '-') return std::nullopt;
  return pid;
}

bool process_is_gone(pid_t pid) { return ::kill(pid, 0) != 0 && errno == ESRCH; }

}  // namespace

std::string staging_name(std::string_view prefix, pid_t pid) {
  return fmt::format("{}{}-{}", prefix, pid, host_tag());
}

std::string staging_name(std::string_view prefix) { return staging_name(prefix, ::getpid()); }

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
