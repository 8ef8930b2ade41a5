#include "bulkgnn/kernels/rules/gemm.hpp"
#include "kernels.hpp"
#include "launch.cuh"

namespace bulkgnn::kernels::cuda {
namespace {

// A block computes a tile × tile piece of C, each of its 256 threads a 4 × 4
// set of elements strided by 16; op(A) and op(B) pass through shared memory
// `depth` columns (rows) at a time. Every element is one fma chain over p in
// increasing order from 0, rules/gemm.hpp's definition, so C has the host
// back ends' bits: blocking K only stores the chain's partial sum between
// tiles. A chain never runs past K (no padded fma(0, 0, acc), which would
// turn an acc of −0 into +0).
constexpr int tile = 64;
constexpr int depth = 16;
constexpr int lanes = 16;  // threads along each side of the tile
constexpr int per_lane = tile / lanes;
static_assert(lanes * lanes == threads_per_block);

struct operand {
  const float* data;
  std::int64_t stored_cols;
  bool transposed;

  // op(X)[i][p].
  __device__ float at(std::int64_t i, std::int64_t p) const {
    return transposed ? data[p * stored_cols + i] : data[i * stored_cols + p];
  }
};

// Loads op(X)[first_i + i][p0 + p] into tile_[p][i] for i < tile, p < depth
// (0 outside the matrix; those entries are never read by a chain), walking
// memory along its stored rows so that neighbouring threads read
// neighbouring addresses.
__device__ void load_tile(const operand& x, std::int64_t first_i, std::int64_t extent_i,
                          std::int64_t p0, std::int64_t k, float (&tile_)[depth][tile + 1]) {
  for (int e = static_cast<int>(threadIdx.x); e < tile * depth; e += threads_per_block) {
    const int i = x.transposed ? e % tile : e / depth;
    const int p = x.transposed ? e / tile : e % depth;
    const std::int64_t gi = first_i + i;
    const std::int64_t gp = p0 + p;
    tile_[p][i] = gi < extent_i && gp < k ? x.at(gi, gp) : 0.0f;
  }
}

// op(B) is read as B's transpose's op: op(B)[p][j] = op'(B)[j][p] with op'
// the opposite of op, so one loader serves both operands.
__global__ void multiply_tiles(operand a, operand b_by_column, std::int64_t m, std::int64_t n,
                               std::int64_t k, float alpha, float beta, float* c) {
  __shared__ float a_tile[depth][tile + 1];
  __shared__ float b_tile[depth][tile + 1];
  const int tx = static_cast<int>(threadIdx.x) % lanes;
  const int ty = static_cast<int>(threadIdx.x) / lanes;
  const std::int64_t row0 = static_cast<std::int64_t>(blockIdx.x) * tile;
  const std::int64_t col0 = static_cast<std::int64_t>(blockIdx.y) * tile;
  float acc[per_lane][per_lane] = {};
  for (std::int64_t p0 = 0; p0 < k; p0 += depth) {
    load_tile(a, row0, m, p0, k, a_tile);
    load_tile(b_by_column, col0, n, p0, k, b_tile);
    __syncthreads();
    const int steps = k - p0 < depth ? static_cast<int>(k - p0) : depth;
    for (int p = 0; p < steps; ++p) {
      float a_values[per_lane];
      float b_values[per_lane];
      for (int i = 0; i < per_lane; ++i) a_values[i] = a_tile[p][ty + lanes * i];
      for (int j = 0; j < per_lane; ++j) b_values[j] = b_tile[p][tx + lanes * j];
      for (int i = 0; i < per_lane; ++i)
        for (int j = 0; j < per_lane; ++j) acc[i][j] = fmaf(a_values[i], b_values[j], acc[i][j]);
    }
    __syncthreads();
  }
  for (int i = 0; i < per_lane; ++i) {
    const std::int64_t r = row0 + ty + lanes * i;
    if (r >= m) continue;
    for (int j = 0; j < per_lane; ++j) {
      const std::int64_t col = col0 + tx + lanes * j;
      if (col >= n) continue;
      float& out = c[r * n + col];
      out = rules::gemm_epilogue(acc[i][j], alpha, beta, beta == 0.0f ? 0.0f : out);
    }
  }
}

}  // namespace

void gemm(const executor& exec, gemm_op op_a, gemm_op op_b, float alpha, dense_view<const float> a,
          dense_view<const float> b, float beta, dense_view<float> c) {
  const std::int64_t m = c.rows;
  const std::int64_t n = c.cols;
  const std::int64_t k = op_a == gemm_op::transposed ? a.rows : a.cols;
  if (m == 0 || n == 0) return;
  const operand a_rows{a.data.data(), a.cols, op_a == gemm_op::transposed};
  const operand b_columns{b.data.data(), b.cols, op_b == gemm_op::plain};
  const dim3 grid(static_cast<unsigned>((m + tile - 1) / tile),
                  static_cast<unsigned>((n + tile - 1) / tile));
  multiply_tiles<<<grid, threads_per_block, 0, stream_of(exec)>>>(a_rows, b_columns, m, n, k, alpha,
                                                                  beta, c.data.data());
  BULKGNN_CUDA_CHECK_LAUNCH();
}

}  // namespace bulkgnn::kernels::cuda
