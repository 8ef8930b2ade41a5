#include "bulkgnn/core/memory.hpp"

#include <malloc.h>

#include <fstream>
#include <string>

namespace bulkgnn {

void keep_freed_buffers_for_reuse() {
  mallopt(M_MMAP_THRESHOLD, 32 << 20);
  mallopt(M_TRIM_THRESHOLD, 256 << 20);
}

std::int64_t peak_resident_bytes() {
  std::ifstream status("/proc/self/status");
  std::string key;
  while (status >> key) {
    if (key == "VmHWM:") {
      std::int64_t kib = 0;
      status >> kib;
      return kib * 1024;
    }
    status.ignore(1 << 20, '\n');
  }
  return 0;
}

void reset_peak_resident_bytes() {
  std::ofstream clear_refs("/proc/self/clear_refs");
  clear_refs << "5";
}

}  // namespace bulkgnn
