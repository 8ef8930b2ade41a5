#pragma once

#include "bulkgnn/core/memory_space.hpp"

#include <cstdint>

namespace bulkgnn::testing {

// Host memory that says it is device memory, so tests without a GPU can
// check that everything that must refuse device buffers and views does, and
// that copies go through the resource. Counts its calls.
class fake_device_memory final : public memory_resource {
 public:
  void* allocate(std::size_t bytes) override {
    ++allocations;
    return host_memory().allocate(bytes);
  }
  void deallocate(void* pointer, std::size_t bytes) noexcept override {
    ++deallocations;
    host_memory().deallocate(pointer, bytes);
  }
  void copy(void* destination, const void* source, std::size_t bytes) override {
    ++copies;
    host_memory().copy(destination, source, bytes);
  }
  memory_space space() const noexcept override { return memory_space::device; }

  std::int64_t allocations = 0;
  std::int64_t deallocations = 0;
  std::int64_t copies = 0;
};

}  // namespace bulkgnn::testing
