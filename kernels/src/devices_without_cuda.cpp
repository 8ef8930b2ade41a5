#include "bulkgnn/kernels/devices.hpp"

#include "bulkgnn/core/error.hpp"

// The build without the CUDA back end: no device is ever visible.
namespace bulkgnn::kernels {

bool cuda_compiled() { return false; }

std::vector<cuda_device> visible_cuda_devices() { return {}; }

executor make_cuda_executor(int device) {
  throw option_error(fmt::format(
      "make_cuda_executor: device {}: this build has no CUDA back end (configure with "
      "BULKGNN_ENABLE_CUDA=ON where nvcc is installed, e.g. the cuda-release preset)",
      device));
}

}  // namespace bulkgnn::kernels
