#include "bulkgnn/kernels/devices.hpp"

#include "bulkgnn/core/error.hpp"

#include <gtest/gtest.h>

#include <cstdlib>
#include <string>

namespace bulkgnn::kernels {
namespace {

// Asking for devices works on any machine: without a driver or a GPU the
// list is empty (the cpu back end runs), never an error or a crash.
TEST(CudaDevices, ListingNeverFails) {
  const auto devices = visible_cuda_devices();
  if (!cuda_compiled()) {
    EXPECT_TRUE(devices.empty());
  }
  for (std::size_t i = 0; i < devices.size(); ++i) {
    EXPECT_EQ(devices[i].id, static_cast<int>(i));
    EXPECT_FALSE(devices[i].name.empty());
    EXPECT_GT(devices[i].memory_bytes, 0);
    EXPECT_GE(devices[i].compute_capability, 50);
  }
}

// A cuda executor for a GPU that is not there (or in a build without CUDA)
// is refused with the device named, never made.
TEST(CudaDevices, AnExecutorOnAMissingDeviceIsRefused) {
  const auto devices = static_cast<int>(visible_cuda_devices().size());
  try {
    (void)make_cuda_executor(devices);
    FAIL() << "made an executor on device " << devices;
  } catch (const option_error& e) {
    EXPECT_NE(std::string(e.what()).find("device " + std::to_string(devices)), std::string::npos)
        << e.what();
  }
}

// On the GPU machine (label gpu) the H100/H200 must be seen.
TEST(CudaDevices, GpuMachineSeesItsGpu) {
  if (std::getenv("BULKGNN_EXPECT_GPU") == nullptr) GTEST_SKIP() << "BULKGNN_EXPECT_GPU not set";
  ASSERT_TRUE(cuda_compiled());
  EXPECT_FALSE(visible_cuda_devices().empty());
}

}  // namespace
}  // namespace bulkgnn::kernels
