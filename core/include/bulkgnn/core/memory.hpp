#pragma once

namespace bulkgnn {

// Makes the C allocator keep freed buffers of up to 32 MiB for reuse. Each
// bulk allocates and frees buffers of tens of MiB; glibc's defaults would map
// each afresh and fault its pages in one by one, serially, which costs a
// third of the sampling time on two threads. Call once at program start.
void keep_freed_buffers_for_reuse();

}  // namespace bulkgnn
