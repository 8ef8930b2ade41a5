#include "bulkgnn/kernels/devices.hpp"

#include "check.cuh"

#include <cstdlib>
#include <stdexcept>
#include <string>

namespace bulkgnn::kernels {

bool cuda_compiled() { return true; }

std::vector<cuda_device> visible_cuda_devices() {
  int count = 0;
  // No driver or no device means the cpu back end runs; not an error here,
  // except on the GPU machine, where the real cause (a driver older than the
  // runtime, say) must show instead of "no CUDA device is visible".
  if (const cudaError_t status = cudaGetDeviceCount(&count); status != cudaSuccess) {
    (void)cudaGetLastError();
    if (std::getenv("BULKGNN_EXPECT_GPU") != nullptr)
      throw std::runtime_error(
          std::string("BULKGNN_EXPECT_GPU is set but cudaGetDeviceCount failed: ") +
          cudaGetErrorName(status) + ": " + cudaGetErrorString(status));
    return {};
  }
  std::vector<cuda_device> devices;
  for (int id = 0; id < count; ++id) {
    cudaDeviceProp properties{};
    BULKGNN_CUDA_CHECK(cudaGetDeviceProperties(&properties, id));
    devices.push_back({.id = id,
                       .name = properties.name,
                       .memory_bytes = static_cast<std::int64_t>(properties.totalGlobalMem),
                       .compute_capability = properties.major * 10 + properties.minor});
  }
  return devices;
}

void synchronize_device(int device) {
  int previous = 0;
  BULKGNN_CUDA_CHECK(cudaGetDevice(&previous));
  BULKGNN_CUDA_CHECK(cudaSetDevice(device));
  const cudaError_t status = cudaDeviceSynchronize();
  BULKGNN_CUDA_CHECK(cudaSetDevice(previous));
  BULKGNN_CUDA_CHECK(status);
}

}  // namespace bulkgnn::kernels
