#pragma once

#include "bulkgnn/core/executor.hpp"
#include "bulkgnn/core/memory_space.hpp"

#include <chrono>
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

// Pinned host memory as far as a caller can tell: host memory tagged
// pinned_host. Counts its allocations.
class fake_pinned_memory final : public memory_resource {
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
    host_memory().copy(destination, source, bytes);
  }
  memory_space space() const noexcept override { return memory_space::pinned_host; }

  std::int64_t allocations = 0;
  std::int64_t deallocations = 0;
};

// A device context over the fake resources: a cuda executor made of it runs
// no kernel (none is compiled against it) but has the memory and spaces of
// one, so the front doors' space checks can be tested without a GPU.
class fake_device_context final : public device_context {
 public:
  int device() const override { return 0; }
  std::string_view device_name() const override { return "fake device"; }
  void* stream() const override { return nullptr; }
  memory_resource& device_memory() override { return device_resource; }
  memory_resource& pinned_memory() override { return pinned_resource; }
  void synchronize() const override { ++synchronizations; }
  // Marks are host clock readings: the fake device runs everything at once.
  std::shared_ptr<void> mark() override {
    return std::make_shared<std::chrono::steady_clock::time_point>(
        std::chrono::steady_clock::now());
  }
  void wait_until(const std::shared_ptr<void>&) const override {}
  double seconds_between(const std::shared_ptr<void>& begin,
                         const std::shared_ptr<void>& end) const override {
    using point = std::chrono::steady_clock::time_point;
    return std::chrono::duration<double>(*static_cast<point*>(end.get()) -
                                         *static_cast<point*>(begin.get()))
        .count();
  }

  fake_device_memory device_resource;
  fake_pinned_memory pinned_resource;
  mutable std::int64_t synchronizations = 0;
};

}  // namespace bulkgnn::testing
