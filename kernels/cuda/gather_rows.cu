#include "kernels.hpp"
#include "launch.cuh"

#include <string>

namespace bulkgnn::kernels::cuda {
namespace {

// One warp per output row, its lanes over the columns: coalesced reads of
// the source row (in device memory or, through UVA, pinned host memory) and
// coalesced writes.
__global__ void gather_dense(const float* x, std::int64_t x_rows, std::int64_t cols,
                             const vertex_t* rows, std::int64_t count, float* out, int* bad_row) {
  const std::int64_t warp =
      (blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x) / warpSize;
  const int lane = static_cast<int>(threadIdx.x % warpSize);
  if (warp >= count) return;
  const vertex_t row = rows[warp];
  if (row < 0 || row >= x_rows) {
    if (lane == 0) atomicExch(bad_row, 1);
    return;
  }
  const float* source = x + row * cols;
  float* target = out + warp * cols;
  for (std::int64_t c = lane; c < cols; c += warpSize) target[c] = source[c];
}

}  // namespace

void gather_dense_rows(const executor& exec, dense_view<const float> x,
                       std::span<const vertex_t> rows, dense_view<float> out) {
  const auto count = static_cast<std::int64_t>(rows.size());
  if (count == 0 || x.cols == 0) return;
  auto bad_row = device_flag(exec);
  const std::int64_t threads = count * 32;
  gather_dense<<<blocks_for(threads), threads_per_block, 0, stream_of(exec)>>>(
      x.data.data(), x.rows, x.cols, rows.data(), count, out.data.data(), bad_row.data());
  BULKGNN_CUDA_CHECK_LAUNCH();
  if (read_back(exec, bad_row.data()) != 0)
    throw_argument_error(
        ("gather_dense_rows: rows holds a vertex outside [0, " + std::to_string(x.rows) + ")")
            .c_str());
}

}  // namespace bulkgnn::kernels::cuda
