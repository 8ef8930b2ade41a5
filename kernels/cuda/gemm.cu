#include "bulkgnn/kernels/rules/gemm.hpp"
#include "check.cuh"
#include "context.cuh"
#include "kernels.hpp"
#include "launch.cuh"

namespace bulkgnn::kernels::cuda {
namespace {

// A block computes a tile × tile piece of C, each of its 256 threads a
// per_lane × per_lane set of elements strided by 16; op(A) and op(B) pass
// through shared memory `depth` columns (rows) at a time. Every element is
// one fma chain over p in increasing order from 0, rules/gemm.hpp's
// definition, so C has the host back ends' bits: blocking K only stores the
// chain's partial sum between tiles. A chain never runs past K (no padded
// fma(0, 0, acc), which would turn an acc of −0 into +0). Chains cannot be
// split, so C's elements are all the parallelism there is: where 64 × 64
// tiles would leave SMs idle (a weight gradient: C is in × out, K the
// minibatch's rows), blocks take 16 × 16 tiles, one element per thread.
constexpr int depth = 16;
constexpr int lanes = 16;  // threads along each side of the tile
static_assert(lanes * lanes == threads_per_block);

// op(X): X as stored, read transposed or not.
struct operand {
  dense_view<const float> stored;
  bool transposed;

  // op(X)[i][p].
  __device__ float at(std::int64_t i, std::int64_t p) const {
    return transposed ? stored.at(p, i) : stored.at(i, p);
  }
};

// Loads op(X)[first_i + i][p0 + p] into tile_[p][i] for i < tile, p < depth
// (0 outside the matrix; those entries are never read by a chain), walking
// memory along its stored rows so that neighbouring threads read
// neighbouring addresses.
template <int tile>
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
template <int per_lane>
__global__ void multiply_tiles(operand a, operand b_by_column, std::int64_t k, float alpha,
                               float beta, dense_view<float> c) {
  const std::int64_t m = c.rows;
  const std::int64_t n = c.cols;
  constexpr int tile = lanes * per_lane;
  __shared__ float a_tile[depth][tile + 1];
  __shared__ float b_tile[depth][tile + 1];
  const int tx = static_cast<int>(threadIdx.x) % lanes;
  const int ty = static_cast<int>(threadIdx.x) / lanes;
  const std::int64_t row0 = static_cast<std::int64_t>(blockIdx.x) * tile;
  const std::int64_t col0 = static_cast<std::int64_t>(blockIdx.y) * tile;
  float acc[per_lane][per_lane] = {};
  for (std::int64_t p0 = 0; p0 < k; p0 += depth) {
    load_tile<tile>(a, row0, m, p0, k, a_tile);
    load_tile<tile>(b_by_column, col0, n, p0, k, b_tile);
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
      float& out = c.at(r, col);
      out = rules::gemm_epilogue(acc[i][j], alpha, beta, beta == 0.0f ? 0.0f : out);
    }
  }
}

template <int per_lane>
void launch_tiles(const executor& exec, const operand& a, const operand& b, std::int64_t k,
                  float alpha, float beta, dense_view<float> c) {
  constexpr int tile = lanes * per_lane;
  const dim3 grid(static_cast<unsigned>((c.rows + tile - 1) / tile),
                  static_cast<unsigned>((c.cols + tile - 1) / tile));
  multiply_tiles<per_lane>
      <<<grid, threads_per_block, 0, stream_of(exec)>>>(a, b, k, alpha, beta, c);
  BULKGNN_CUDA_CHECK_LAUNCH();
}

int multiprocessors_of(const executor& exec) {
  int count = 0;
  BULKGNN_CUDA_CHECK(
      cudaDeviceGetAttribute(&count, cudaDevAttrMultiProcessorCount, exec.device()->device()));
  return count;
}

// cuBLAS is column-major: the row-major C (m × n) is the column-major
// Cᵀ (n × m) = op(B)ᵀ·op(A)ᵀ, and a row-major X read column-major is Xᵀ
// with its row length as leading dimension. So op(B)ᵀ is B's column-major
// view as it is when op_b is plain and transposed when it is transposed,
// and the same for A.
cublasOperation_t column_major_op(gemm_op op) {
  return op == gemm_op::plain ? CUBLAS_OP_N : CUBLAS_OP_T;
}

int leading_dimension(std::int64_t stored_cols) {
  return cublas_size(stored_cols > 1 ? stored_cols : 1, "gemm");
}

}  // namespace

void gemm(const executor& exec, gemm_op op_a, gemm_op op_b, float alpha, dense_view<const float> a,
          dense_view<const float> b, float beta, dense_view<float> c) {
  const std::int64_t m = c.rows;
  const std::int64_t n = c.cols;
  const std::int64_t k = op_a == gemm_op::transposed ? a.rows : a.cols;
  if (m == 0 || n == 0) return;
  const operand a_rows{a, op_a == gemm_op::transposed};
  const operand b_columns{b, op_b == gemm_op::plain};
  const std::int64_t large_tiles = ((m + 63) / 64) * ((n + 63) / 64);
  if (large_tiles >= 2 * static_cast<std::int64_t>(multiprocessors_of(exec)))
    launch_tiles<4>(exec, a_rows, b_columns, k, alpha, beta, c);
  else
    launch_tiles<1>(exec, a_rows, b_columns, k, alpha, beta, c);
}

void gemm_cublas(const executor& exec, gemm_op op_a, gemm_op op_b, float alpha,
                 dense_view<const float> a, dense_view<const float> b, float beta,
                 dense_view<float> c) {
  const std::int64_t m = c.rows;
  const std::int64_t n = c.cols;
  const std::int64_t k = op_a == gemm_op::transposed ? a.rows : a.cols;
  if (m == 0 || n == 0) return;
  const int rows = cublas_size(m, "gemm");
  const int cols = cublas_size(n, "gemm");
  const int inner = cublas_size(k, "gemm");
  const current_device on(exec);
  const auto blas = blas_of(exec);
  BULKGNN_CUBLAS_CHECK(cublas().sgemm(blas.handle, column_major_op(op_b), column_major_op(op_a),
                                      cols, rows, inner, &alpha, b.data.data(),
                                      leading_dimension(b.cols), a.data.data(),
                                      leading_dimension(a.cols), &beta, c.data.data(), cols));
}

}  // namespace bulkgnn::kernels::cuda
