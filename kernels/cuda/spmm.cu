#include "kernels.hpp"
#include "launch.cuh"

#include <string>

namespace bulkgnn::kernels::cuda {
namespace {

// One warp per row of A, its lanes over the columns of X: each output element
// sums its row's products in stored order from 0, multiply and add rounded
// apart (never fused), as the host back ends sum; reads of X's rows are
// coalesced across the lanes.
__global__ void multiply(const edge_t* indptr, const vertex_t* indices, const float* values,
                         std::int64_t rows, std::int64_t x_rows, const float* x, std::int64_t cols,
                         float* y, int* bad_column) {
  const std::int64_t r =
      (blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x) / warpSize;
  const int lane = static_cast<int>(threadIdx.x % warpSize);
  if (r >= rows) return;
  const edge_t base = indptr[0];
  for (std::int64_t j = lane; j < cols; j += warpSize) {
    float sum = 0.0f;
    for (edge_t e = indptr[r] - base; e < indptr[r + 1] - base; ++e) {
      const vertex_t c = indices[e];
      if (c < 0 || c >= x_rows) {
        atomicExch(bad_column, 1);
        break;
      }
      const float value = values == nullptr ? 1.0f : values[e];
      sum = __fadd_rn(sum, __fmul_rn(value, x[c * cols + j]));
    }
    y[r * cols + j] = sum;
  }
}

}  // namespace

void spmm(const executor& exec, csr_view a, dense_view<const float> x, dense_view<float> y) {
  if (a.rows == 0 || x.cols == 0) return;
  auto bad_column = device_flag(exec);
  multiply<<<blocks_for(a.rows * 32), threads_per_block, 0, stream_of(exec)>>>(
      a.indptr.data(), a.indices.data(), a.weighted() ? a.values.data() : nullptr, a.rows, x.rows,
      x.data.data(), x.cols, y.data.data(), bad_column.data());
  BULKGNN_CUDA_CHECK_LAUNCH();
  if (read_back(exec, bad_column.data()) != 0)
    throw_argument_error(
        ("spmm: a holds a column outside [0, " + std::to_string(x.rows) + ")").c_str());
}

}  // namespace bulkgnn::kernels::cuda
