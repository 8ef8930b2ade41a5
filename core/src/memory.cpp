#include "bulkgnn/core/memory.hpp"

#include <malloc.h>
#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <fstream>
#include <limits>
#include <string>

namespace bulkgnn {

void keep_freed_buffers_for_reuse() {
  mallopt(M_MMAP_THRESHOLD, 32 << 20);
  mallopt(M_TRIM_THRESHOLD, 256 << 20);
}

namespace {

// A "Key: N kB" line of /proc/self/status, in bytes.
std::int64_t status_bytes(const std::string& wanted) {
  std::ifstream status("/proc/self/status");
  std::string key;
  while (status >> key) {
    if (key == wanted) {
      std::int64_t kib = 0;
      status >> kib;
      return kib * 1024;
    }
    status.ignore(1 << 20, '\n');
  }
  return 0;
}

constexpr double unlimited = std::numeric_limits<double>::infinity();

// The number after `key` in a file of "key value" lines such as /proc/meminfo
// ("MemAvailable: 123 kB"), times `unit`; unlimited if absent.
double keyed_number_in(const std::string& path, const std::string& key, double unit) {
  std::ifstream in(path);
  std::string name;
  while (in >> name) {
    double value = 0;
    if (name == key) return in >> value ? value * unit : unlimited;
    in.ignore(std::numeric_limits<std::streamsize>::max(), '\n');
  }
  return unlimited;
}

// A cgroup's memory limit file: a number of bytes, or "max" (cgroup v2) for
// none; unlimited if absent.
double cgroup_limit_in(const std::string& path) {
  std::ifstream in(path);
  std::string token;
  if (!(in >> token) || token == "max") return unlimited;
  double bytes = 0;
  const auto [end, ec] = std::from_chars(token.data(), token.data() + token.size(), bytes);
  return ec == std::errc() && end == token.data() + token.size() ? bytes : unlimited;
}

}  // namespace

std::int64_t peak_resident_bytes() { return status_bytes("VmHWM:"); }

std::int64_t resident_file_bytes() { return status_bytes("RssFile:"); }

double available_memory_bytes() {
  const double meminfo = keyed_number_in("/proc/meminfo", "MemAvailable:", 1024);
  const double physical = static_cast<double>(::sysconf(_SC_PHYS_PAGES)) *
                          static_cast<double>(::sysconf(_SC_PAGE_SIZE));
  const double cgroup_v2 = cgroup_limit_in("/sys/fs/cgroup/memory.max");
  const double cgroup_v1 = cgroup_limit_in("/sys/fs/cgroup/memory/memory.limit_in_bytes");
  return std::min({std::isfinite(meminfo) ? meminfo : physical, cgroup_v2, cgroup_v1});
}

void reset_peak_resident_bytes() {
  std::ofstream clear_refs("/proc/self/clear_refs");
  clear_refs << "5";
}

}  // namespace bulkgnn
