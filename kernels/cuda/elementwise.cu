#include "kernels.hpp"
#include "launch.cuh"

namespace bulkgnn::kernels::cuda {
namespace {

__global__ void fill_values(float* x, std::int64_t count, float value) {
  const std::int64_t i = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x;
  if (i < count) x[i] = value;
}

__global__ void scale_values(float* x, std::int64_t count, float factor) {
  const std::int64_t i = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x;
  if (i < count) x[i] = __fmul_rn(x[i], factor);
}

__global__ void multiply_values(const float* a, const float* b, float* out, std::int64_t count) {
  const std::int64_t i = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x;
  if (i < count) out[i] = __fmul_rn(a[i], b[i]);
}

}  // namespace

void fill(const executor& exec, std::span<float> x, float value) {
  const auto count = static_cast<std::int64_t>(x.size());
  if (count == 0) return;
  fill_values<<<blocks_for(count), threads_per_block, 0, stream_of(exec)>>>(x.data(), count, value);
  BULKGNN_CUDA_CHECK_LAUNCH();
}

void scale(const executor& exec, std::span<float> x, float factor) {
  const auto count = static_cast<std::int64_t>(x.size());
  if (count == 0) return;
  scale_values<<<blocks_for(count), threads_per_block, 0, stream_of(exec)>>>(x.data(), count,
                                                                             factor);
  BULKGNN_CUDA_CHECK_LAUNCH();
}

void multiply(const executor& exec, std::span<const float> a, std::span<const float> b,
              std::span<float> out) {
  const auto count = static_cast<std::int64_t>(out.size());
  if (count == 0) return;
  multiply_values<<<blocks_for(count), threads_per_block, 0, stream_of(exec)>>>(a.data(), b.data(),
                                                                                out.data(), count);
  BULKGNN_CUDA_CHECK_LAUNCH();
}

}  // namespace bulkgnn::kernels::cuda
