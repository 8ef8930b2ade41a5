#pragma once

#include "bulkgnn/core/dense.hpp"

#include <cstdint>
#include <vector>

namespace bulkgnn::trainer {

// One gemm() call, as benchmarks/trainer/gemm_efficiency replays it.
struct gemm_call {
  bool transpose_a = false;
  bool transpose_b = false;
  std::int64_t m = 0;
  std::int64_t n = 0;
  std::int64_t k = 0;
  double seconds = 0;
};

// Work done by gemm(), for the trainer's throughput report; with `log` set,
// every call is also appended there.
struct gemm_stats {
  double flops = 0;
  double seconds = 0;
  std::int64_t calls = 0;
  std::vector<gemm_call>* log = nullptr;
};

// C = alpha·op(A)·op(B) + beta·C through cblas_sgemm, where op(X) is X or its
// transpose. Shapes are checked (bulkgnn::option_error naming them); adds the
// call to *stats if given. With beta == 0, C's old contents are ignored (NaN
// included).
void gemm(bool transpose_a, bool transpose_b, float alpha, dense_view<const float> a,
          dense_view<const float> b, float beta, dense_view<float> c, gemm_stats* stats = nullptr);

// Threads OpenBLAS may use for one call (openblas_set_num_threads). OpenBLAS
// splits M and N among threads, never K, but its threaded driver blocks K
// differently from its serial one; gemm() therefore feeds it K in blocks of
// at most 256, so that results do not depend on the thread count (tested).
void set_blas_threads(int threads);
[[nodiscard]] int blas_threads();

}  // namespace bulkgnn::trainer
