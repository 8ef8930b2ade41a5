#include "bulkgnn/trainer/blas.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>

#include "bulkgnn/core/error.hpp"
#include "test_support.hpp"

namespace bulkgnn::trainer {
namespace {

using testing::random_matrix;

// Restores the BLAS thread count a test changes.
class blas_threads_guard {
 public:
  blas_threads_guard() : threads_(blas_threads()) {}
  ~blas_threads_guard() { set_blas_threads(threads_); }
  blas_threads_guard(const blas_threads_guard&) = delete;
  blas_threads_guard& operator=(const blas_threads_guard&) = delete;

 private:
  int threads_;
};

float at(const matrix& m, bool transposed, std::int64_t i, std::int64_t j) {
  return transposed ? m.data()[j * m.cols() + i] : m.data()[i * m.cols() + j];
}

TEST(Gemm, MatchesNaiveProductForEveryTransposeCombination) {
  std::mt19937_64 gen(1);
  const std::int64_t m = 7, n = 5, k = 9;
  for (const bool ta : {false, true}) {
    for (const bool tb : {false, true}) {
      const matrix a = ta ? random_matrix(gen, k, m) : random_matrix(gen, m, k);
      const matrix b = tb ? random_matrix(gen, n, k) : random_matrix(gen, k, n);
      matrix c = random_matrix(gen, m, n);
      const matrix c0 = c;
      gemm(ta, tb, 0.5f, a.view(), b.view(), 2.0f, c.view());
      for (std::int64_t i = 0; i < m; ++i)
        for (std::int64_t j = 0; j < n; ++j) {
          double expected = 2.0 * c0.data()[i * n + j];
          for (std::int64_t p = 0; p < k; ++p)
            expected += 0.5 * at(a, ta, i, p) * static_cast<double>(at(b, tb, p, j));
          EXPECT_NEAR(c.data()[i * n + j], expected, 1e-5) << ta << tb << " " << i << "," << j;
        }
    }
  }
}

TEST(Gemm, RejectsMismatchedShapesNamingThem) {
  matrix a(3, 4), b(5, 2), c(3, 2);
  try {
    gemm(false, false, 1.0f, a.view(), b.view(), 0.0f, c.view());
    FAIL();
  } catch (const option_error& e) {
    EXPECT_NE(std::string(e.what()).find("op(A) is 3x4, op(B) is 5x2"), std::string::npos)
        << e.what();
  }
}

TEST(Gemm, EmptyInnerDimensionGivesBetaTimesCAndZeroBetaIgnoresNaN) {
  matrix a(3, 0), b(0, 2), c(3, 2);
  std::fill(c.data().begin(), c.data().end(), std::numeric_limits<float>::quiet_NaN());
  gemm(false, false, 1.0f, a.view(), b.view(), 0.0f, c.view());
  for (const float v : c.data()) EXPECT_EQ(v, 0.0f);
}

TEST(Gemm, CountsFlopsAndCalls) {
  matrix a(3, 4), b(4, 5), c(3, 5);
  gemm_stats stats;
  gemm(false, false, 1.0f, a.view(), b.view(), 0.0f, c.view(), &stats);
  gemm(false, false, 1.0f, a.view(), b.view(), 0.0f, c.view(), &stats);
  EXPECT_EQ(stats.calls, 2);
  EXPECT_EQ(stats.flops, 2 * 2.0 * 3 * 4 * 5);
  EXPECT_GE(stats.seconds, 0.0);
}

// Threaded, and K spans several of OpenBLAS's K blocks, which its serial
// and threaded drivers would cut at different places.
TEST(Gemm, ResultDoesNotDependOnBlasThreads) {
  const blas_threads_guard guard;
  std::mt19937_64 gen(2);
  const std::int64_t m = 200, n = 150, k = 1000;
  for (const bool ta : {false, true}) {
    for (const bool tb : {false, true}) {
      const matrix a = ta ? random_matrix(gen, k, m) : random_matrix(gen, m, k);
      const matrix b = tb ? random_matrix(gen, n, k) : random_matrix(gen, k, n);
      matrix one(m, n), two(m, n);
      set_blas_threads(1);
      gemm(ta, tb, 1.0f, a.view(), b.view(), 0.0f, one.view());
      set_blas_threads(2);
      gemm(ta, tb, 1.0f, a.view(), b.view(), 0.0f, two.view());
      EXPECT_TRUE(std::equal(one.data().begin(), one.data().end(), two.data().begin()))
          << "transpose " << ta << tb;
    }
  }
}

}  // namespace
}  // namespace bulkgnn::trainer
