#include "bulkgnn/core/memory.hpp"

#include <malloc.h>

namespace bulkgnn {

void keep_freed_buffers_for_reuse() {
  mallopt(M_MMAP_THRESHOLD, 32 << 20);
  mallopt(M_TRIM_THRESHOLD, 256 << 20);
}

}  // namespace bulkgnn
