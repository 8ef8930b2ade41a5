#include "bulkgnn/kernels/rules/adam.hpp"
#include "kernels.hpp"
#include "launch.cuh"

namespace bulkgnn::kernels::cuda {
namespace {

// The target is compiled with --fmad=false, so the rule's products and sums
// round apart, as on the host.
__global__ void adam_entries(rules::adam_constants constants, float* parameters,
                             const float* gradients, float* m, float* v, std::int64_t count) {
  const std::int64_t i = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x;
  if (i < count) rules::adam_update(constants, parameters[i], gradients[i], m[i], v[i]);
}

}  // namespace

void adam_step(const executor& exec, const rules::adam_constants& constants,
               std::span<float> parameters, std::span<const float> gradients, std::span<float> m,
               std::span<float> v) {
  const auto count = static_cast<std::int64_t>(parameters.size());
  if (count == 0) return;
  adam_entries<<<blocks_for(count), threads_per_block, 0, stream_of(exec)>>>(
      constants, parameters.data(), gradients.data(), m.data(), v.data(), count);
  BULKGNN_CUDA_CHECK_LAUNCH();
}

}  // namespace bulkgnn::kernels::cuda
