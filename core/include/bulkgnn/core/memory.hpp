#pragma once

#include <cstdint>

namespace bulkgnn {

// Makes the C allocator keep freed buffers of up to 32 MiB for reuse. Each
// bulk allocates and frees buffers of tens of MiB; glibc's defaults would map
// each afresh and fault its pages in one by one, serially, which costs a
// third of the sampling time on two threads. Call once at program start.
void keep_freed_buffers_for_reuse();

// The process's peak resident set size (VmHWM) in bytes since it started or
// since the last reset_peak_resident_bytes(); 0 where /proc is unavailable.
[[nodiscard]] std::int64_t peak_resident_bytes();

// The file-backed pages the process has resident now (RssFile): memory-mapped
// datasets, which every process mapping the same file shares; 0 where /proc
// is unavailable.
[[nodiscard]] std::int64_t resident_file_bytes();

// The memory this process can still use, in bytes: the kernel's
// MemAvailable, or less under a cgroup limit.
[[nodiscard]] double available_memory_bytes();

// Restarts the peak at the current resident size (Linux clear_refs "5"), so a
// peak can be measured per epoch. Does nothing where that is unsupported.
void reset_peak_resident_bytes();

}  // namespace bulkgnn
