#include "bulkgnn/trainer/blas.hpp"

#include "bulkgnn/core/error.hpp"

#include <cblas.h>

#include <algorithm>
#include <chrono>

namespace bulkgnn::trainer {

namespace {

struct op_shape {
  std::int64_t rows;
  std::int64_t cols;
};

op_shape shape_of(dense_view<const float> m, bool transposed) {
  return transposed ? op_shape{m.cols, m.rows} : op_shape{m.rows, m.cols};
}

void check_storage(std::int64_t rows, std::int64_t cols, std::size_t size, char name) {
  BULKGNN_EXPECTS(rows >= 0 && cols >= 0 && static_cast<std::size_t>(rows * cols) <= size,
                  "gemm: {} is {}x{} but holds {} floats", name, rows, cols, size);
}

// cblas rejects a leading dimension of 0 even when the matrix is empty.
blasint leading_dimension(std::int64_t cols) {
  return static_cast<blasint>(std::max<std::int64_t>(cols, 1));
}

// OpenBLAS splits K into blocks of at most GEMM_Q and adds each block's
// product to C, but its serial and threaded drivers place the block
// boundaries differently once K > GEMM_Q (320 for sgemm in Debian's
// OpenBLAS 0.3.21 on Cooperlake), so results would change with the thread
// count. Calls with K at most this many are one block in both, on any core
// whose GEMM_Q is at least this.
constexpr std::int64_t k_block = 256;

void scale(dense_view<float> c, float beta) {
  const auto used = c.data.first(static_cast<std::size_t>(c.rows * c.cols));
  for (float& v : used) v = beta == 0.0f ? 0.0f : beta * v;
}

// Where op(X)'s K index k0 starts in X: a row when K runs down X's rows,
// else a column.
const float* k_slice(dense_view<const float> x, bool k_is_row, std::int64_t k0) {
  return x.data.data() + (k_is_row ? k0 * x.cols : k0);
}

}  // namespace

void gemm(bool transpose_a, bool transpose_b, float alpha, dense_view<const float> a,
          dense_view<const float> b, float beta, dense_view<float> c, gemm_stats* stats) {
  check_storage(a.rows, a.cols, a.data.size(), 'A');
  check_storage(b.rows, b.cols, b.data.size(), 'B');
  check_storage(c.rows, c.cols, c.data.size(), 'C');
  const auto op_a = shape_of(a, transpose_a);
  const auto op_b = shape_of(b, transpose_b);
  BULKGNN_EXPECTS(op_a.cols == op_b.rows && c.rows == op_a.rows && c.cols == op_b.cols,
                  "gemm: op(A) is {}x{}, op(B) is {}x{}, C is {}x{}", op_a.rows, op_a.cols,
                  op_b.rows, op_b.cols, c.rows, c.cols);
  const std::int64_t m = c.rows;
  const std::int64_t n = c.cols;
  const std::int64_t k = op_a.cols;
  if (m == 0 || n == 0) return;
  const auto start = std::chrono::steady_clock::now();
  if (k == 0) scale(c, beta);
  for (std::int64_t k0 = 0; k0 < k; k0 += k_block) {
    const std::int64_t kk = std::min(k_block, k - k0);
    cblas_sgemm(CblasRowMajor, transpose_a ? CblasTrans : CblasNoTrans,
                transpose_b ? CblasTrans : CblasNoTrans, static_cast<blasint>(m),
                static_cast<blasint>(n), static_cast<blasint>(kk), alpha,
                k_slice(a, transpose_a, k0), leading_dimension(a.cols),
                k_slice(b, !transpose_b, k0), leading_dimension(b.cols), k0 == 0 ? beta : 1.0f,
                c.data.data(), leading_dimension(c.cols));
  }
  if (stats == nullptr) return;
  stats->flops += 2.0 * static_cast<double>(m) * static_cast<double>(n) * static_cast<double>(k);
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  stats->seconds += seconds;
  ++stats->calls;
  if (stats->log != nullptr) stats->log->push_back({transpose_a, transpose_b, m, n, k, seconds});
}

void set_blas_threads(int threads) {
  BULKGNN_EXPECTS(threads >= 1, "set_blas_threads: threads = {} must be at least 1", threads);
  openblas_set_num_threads(threads);
}

int blas_threads() { return openblas_get_num_threads(); }

}  // namespace bulkgnn::trainer
