#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

namespace bulkgnn {

// Where an array lives. Host code reads and writes host and pinned host
// memory directly (pinned host memory is page-locked so that a GPU can copy
// it asynchronously or read it through UVA); device memory is reached only
// by a device backend's kernels and copies.
enum class memory_space : std::uint8_t { host, pinned_host, device };

[[nodiscard]] std::string_view memory_space_name(memory_space space);

[[nodiscard]] constexpr bool host_accessible(memory_space space) {
  return space != memory_space::device;
}

// Throws bulkgnn::error "<type>::<operation>: the <type> is in <space>
// memory, which host code cannot access; copy it to the host first".
[[noreturn]] void throw_host_access_error(const char* type, const char* operation,
                                          memory_space space);

// Allocates and frees the storage of owning buffers in one memory space. The
// host resource lives in core; a device backend (cuda/) provides pinned host
// and device resources (a stream-ordered pool there, so the hot path never
// calls cudaMalloc).
class memory_resource {
 public:
  virtual ~memory_resource() = default;
  // At least `bytes` bytes aligned to `alignment`; throws std::bad_alloc (or
  // a bulkgnn::error naming the resource) when it cannot.
  [[nodiscard]] virtual void* allocate(std::size_t bytes) = 0;
  virtual void deallocate(void* pointer, std::size_t bytes) noexcept = 0;
  // Copies between two allocations of this resource, or from and to host
  // memory: what copying a buffer needs.
  virtual void copy(void* destination, const void* source, std::size_t bytes) = 0;
  [[nodiscard]] virtual memory_space space() const noexcept = 0;

  // Every allocation is aligned for any element type and for 64-byte SIMD
  // loads.
  static constexpr std::size_t alignment = 64;
};

// Pageable host memory from the C allocator (so keep_freed_buffers_for_reuse
// applies to buffers too).
[[nodiscard]] memory_resource& host_memory();

}  // namespace bulkgnn
