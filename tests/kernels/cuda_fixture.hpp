#pragma once

// The fixture of the CUDA back end's tests (label gpu): without a visible GPU
// every test says why it is skipped; with BULKGNN_EXPECT_GPU set (the GPU
// machine's check script sets it), a missing GPU fails instead.
#include "bulkgnn/core/buffer.hpp"
#include "bulkgnn/core/executor.hpp"
#include "bulkgnn/core/segmented.hpp"
#include "bulkgnn/kernels/devices.hpp"

#include <gtest/gtest.h>

#include <cstdlib>
#include <optional>
#include <span>

namespace bulkgnn::kernels::testing {

class CudaKernels : public ::testing::Test {
 protected:
  void SetUp() override {
    if (visible_cuda_devices().empty()) {
      if (std::getenv("BULKGNN_EXPECT_GPU") != nullptr)
        FAIL() << "BULKGNN_EXPECT_GPU is set but no CUDA device is visible";
      GTEST_SKIP() << (cuda_compiled() ? "no CUDA device is visible"
                                       : "this build has no CUDA back end");
    }
    gpu_.emplace(make_cuda_executor(0));
  }

  [[nodiscard]] const executor& gpu() const { return *gpu_; }
  [[nodiscard]] memory_resource& device() const { return gpu_->memory(); }
  [[nodiscard]] memory_resource& pinned() const { return gpu_->device()->pinned_memory(); }

  // Vertices in device memory, offsets pinned, as the sampler keeps them.
  [[nodiscard]] segmented_vertices on_gpu(const segmented_vertices& s) const {
    segmented_vertices there;
    there.vertices = copy_to(std::span<const vertex_t>(s.vertices), device());
    there.offsets = copy_to(std::span<const std::int64_t>(s.offsets), pinned());
    return there;
  }
  [[nodiscard]] buffer<vertex_t> on_gpu(std::span<const vertex_t> values) const {
    return copy_to(values, device());
  }

 private:
  std::optional<executor> gpu_;
};

}  // namespace bulkgnn::kernels::testing
