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

// C = alpha·op(A)·op(B) + beta·C, where op(X) is X or its transpose, in
// single precision through OpenBLAS. Shapes are checked
// (bulkgnn::option_error naming them); adds the call to *stats if given.
//
// The result does not depend on the thread count: C is cut into tiles fixed
// by its shape alone, each tile is one single-threaded OpenBLAS call over all
// of K, and threads only share out whole tiles. (OpenBLAS's own threading
// blocks K differently with its thread count on some cores, so gemm() keeps
// it at one thread.) Across CPUs the last bits may differ, as OpenBLAS picks
// its kernel by core; with beta == 0, C's old contents are ignored, NaN
// included.
void gemm(bool transpose_a, bool transpose_b, float alpha, dense_view<const float> a,
          dense_view<const float> b, float beta, dense_view<float> c, gemm_stats* stats = nullptr);

// The product as a plain loop (one fma chain over K per element, then
// alpha/beta): the oracle of the tests.
void gemm_reference(bool transpose_a, bool transpose_b, float alpha, dense_view<const float> a,
                    dense_view<const float> b, float beta, dense_view<float> c);

// Threads (oneTBB, within any thread_limit) that gemm() runs the tiles of C
// on; each tile belongs to one thread, so the count never changes a result.
// Defaults to all cores.
void set_gemm_threads(int threads);
[[nodiscard]] int gemm_threads();

}  // namespace bulkgnn::trainer
