#include "bulkgnn/kernels/devices.hpp"

namespace bulkgnn::kernels {

executor make_executor(backend kind, int threads) {
  if (kind == backend::cuda) return make_cuda_executor(0);
  return {kind, threads};
}

}  // namespace bulkgnn::kernels
