#include "bulkgnn/core/error.hpp"
#include "bulkgnn/kernels/devices.hpp"
#include "context.cuh"

namespace bulkgnn::kernels {

executor make_cuda_executor(int device) {
  const auto devices = visible_cuda_devices();
  BULKGNN_EXPECTS(device >= 0 && device < static_cast<int>(devices.size()),
                  "make_cuda_executor: device {} is not visible ({} CUDA device{} visible)", device,
                  devices.size(), devices.size() == 1 ? " is" : "s are");
  return executor(cuda::create_context(device));
}

}  // namespace bulkgnn::kernels
