#include "bulkgnn/kernels/devices.hpp"

#include "check.cuh"

namespace bulkgnn::kernels {

bool cuda_compiled() { return true; }

std::vector<cuda_device> visible_cuda_devices() {
  int count = 0;
  // No driver or no device means the cpu back end runs; not an error here.
  if (cudaGetDeviceCount(&count) != cudaSuccess) {
    (void)cudaGetLastError();
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

}  // namespace bulkgnn::kernels
