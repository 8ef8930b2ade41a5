#pragma once

#include "bulkgnn/core/dense.hpp"

#include <cstdint>
#include <string_view>
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

// C = alpha·op(A)·op(B) + beta·C, where op(X) is X or its transpose. Shapes
// are checked (bulkgnn::option_error naming them); adds the call to *stats if
// given.
//
// The result is defined exactly, so that it depends on neither the thread
// count, the tiling nor the instruction set: every element is
//   acc = 0; for p = 0, 1, ..., K-1: acc = fma(op(A)[i][p], op(B)[p][j], acc)
//   C[i][j] = beta == 0 ? alpha·acc : fma(beta, C[i][j], alpha·acc)
// in single precision (with beta == 0, C's old contents are ignored, NaN
// included). gemm_reference() is that definition, literally.
void gemm(bool transpose_a, bool transpose_b, float alpha, dense_view<const float> a,
          dense_view<const float> b, float beta, dense_view<float> c, gemm_stats* stats = nullptr);

// The definition above as a plain loop: the oracle of the tests.
void gemm_reference(bool transpose_a, bool transpose_b, float alpha, dense_view<const float> a,
                    dense_view<const float> b, float beta, dense_view<float> c);

// Which microkernel gemm() runs on this machine: "avx512" (with
// cpu_runs_avx512()), else "avx2" (x86-64 with AVX2 and FMA), else "portable"
// (std::fma). BULKGNN_PORTABLE_GEMM=1 forces "portable", BULKGNN_NO_AVX512=1
// rules out "avx512", so that the tests check every path on any machine.
[[nodiscard]] std::string_view gemm_kernel_name();

// Threads (oneTBB, within any thread_limit) that gemm() runs the tiles of C
// on; each tile belongs to one thread, so the count never changes a result.
// Defaults to all cores.
void set_gemm_threads(int threads);
[[nodiscard]] int gemm_threads();

}  // namespace bulkgnn::trainer
