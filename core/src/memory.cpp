#include "bulkgnn/core/memory.hpp"

#include <malloc.h>

#include <fstream>
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

}  // namespace

std::int64_t peak_resident_bytes() { return status_bytes("VmHWM:"); }

std::int64_t resident_file_bytes() { return status_bytes("RssFile:"); }

void reset_peak_resident_bytes() {
  std::ofstream clear_refs("/proc/self/clear_refs");
  clear_refs << "5";
}

}  // namespace bulkgnn
