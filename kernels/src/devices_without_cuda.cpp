#include "bulkgnn/kernels/devices.hpp"

// The build without the CUDA back end: no device is ever visible.
namespace bulkgnn::kernels {

bool cuda_compiled() { return false; }

std::vector<cuda_device> visible_cuda_devices() { return {}; }

}  // namespace bulkgnn::kernels
