#include "bulkgnn/core/buffer.hpp"
#include "check.cuh"
#include "context.cuh"
#include "kernels.hpp"
#include "launch.cuh"

namespace bulkgnn::kernels::cuda {
namespace {

__global__ void fill_rows(const float* bias, std::int64_t cols, float* out, std::int64_t count) {
  const std::int64_t i = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x;
  if (i < count) out[i] = bias[i % cols];
}

// One thread per column adds the rows in order from 0, as the host back ends
// sum each column; consecutive threads read consecutive columns of a row.
__global__ void sum_columns(const float* m, std::int64_t rows, std::int64_t cols, float* sums) {
  const std::int64_t j = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x;
  if (j >= cols) return;
  float sum = 0.0f;
  for (std::int64_t r = 0; r < rows; ++r) sum = __fadd_rn(sum, m[r * cols + j]);
  sums[j] = sum;
}

}  // namespace

void column_sums_cublas(const executor& exec, dense_view<const float> m, std::span<float> sums) {
  if (m.cols == 0) return;
  const int rows = cublas_size(m.rows, "column_sums");
  const int cols = cublas_size(m.cols, "column_sums");
  if (m.rows == 0) {
    fill(exec, sums, 0.0f);
    return;
  }
  // A pooled, stream-ordered buffer: freed on the stream after the SGEMV.
  buffer<float> ones(static_cast<std::size_t>(m.rows), exec.memory());
  fill(exec, std::span<float>(ones), 1.0f);
  const float one = 1.0f;
  const float zero = 0.0f;
  const current_device on(exec);
  const auto blas = blas_of(exec);
  // Row-major m read column-major is mᵀ (cols × rows, leading dimension cols).
  BULKGNN_CUBLAS_CHECK(cublas().sgemv(blas.handle, CUBLAS_OP_N, cols, rows, &one, m.data.data(),
                                      cols, ones.data(), 1, &zero, sums.data(), 1));
}

void fill_rows_with_bias(const executor& exec, std::span<const float> bias, dense_view<float> out) {
  const std::int64_t count = out.rows * out.cols;
  if (count == 0) return;
  fill_rows<<<blocks_for(count), threads_per_block, 0, stream_of(exec)>>>(bias.data(), out.cols,
                                                                          out.data.data(), count);
  BULKGNN_CUDA_CHECK_LAUNCH();
}

void column_sums(const executor& exec, dense_view<const float> m, std::span<float> sums) {
  if (m.cols == 0) return;
  sum_columns<<<blocks_for(m.cols), threads_per_block, 0, stream_of(exec)>>>(m.data.data(), m.rows,
                                                                             m.cols, sums.data());
  BULKGNN_CUDA_CHECK_LAUNCH();
}

}  // namespace bulkgnn::kernels::cuda
