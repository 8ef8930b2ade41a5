#include "bulkgnn/core/memory_space.hpp"

#include "bulkgnn/core/error.hpp"

#include <cstdlib>
#include <cstring>
#include <new>

namespace bulkgnn {

std::string_view memory_space_name(memory_space space) {
  switch (space) {
    case memory_space::host:
      return "host";
    case memory_space::pinned_host:
      return "pinned host";
    case memory_space::device:
      return "device";
  }
  return "unknown";
}

void throw_host_access_error(const char* type, const char* operation, memory_space space) {
  throw error(
      fmt::format("{}::{}: the {} is in {} memory, which host code cannot access; copy it "
                  "to the host first",
                  type, operation, type, memory_space_name(space)));
}

namespace {

class host_resource final : public memory_resource {
 public:
  void* allocate(std::size_t bytes) override {
    // aligned_alloc wants a multiple of the alignment.
    const std::size_t rounded = (bytes + alignment - 1) / alignment * alignment;
    void* pointer = std::aligned_alloc(alignment, rounded == 0 ? alignment : rounded);
    if (pointer == nullptr) throw std::bad_alloc();
    return pointer;
  }
  void deallocate(void* pointer, std::size_t) noexcept override { std::free(pointer); }
  void copy(void* destination, const void* source, std::size_t bytes) override {
    if (bytes > 0) std::memcpy(destination, source, bytes);
  }
  memory_space space() const noexcept override { return memory_space::host; }
};

}  // namespace

memory_resource& host_memory() {
  static host_resource resource;
  return resource;
}

}  // namespace bulkgnn
