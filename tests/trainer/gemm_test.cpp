#include "bulkgnn/trainer/gemm.hpp"

#include <cblas.h>
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <random>
#include <tuple>

#include "bulkgnn/core/error.hpp"
#include "test_support.hpp"

namespace bulkgnn::trainer {
namespace {

using testing::random_matrix;

// Restores the GEMM thread count a test changes.
class gemm_threads_guard {
 public:
  gemm_threads_guard() : threads_(gemm_threads()) {}
  ~gemm_threads_guard() { set_gemm_threads(threads_); }
  gemm_threads_guard(const gemm_threads_guard&) = delete;
  gemm_threads_guard& operator=(const gemm_threads_guard&) = delete;

 private:
  int threads_;
};

float at(const matrix& m, bool transposed, std::int64_t i, std::int64_t j) {
  return transposed ? m.data()[j * m.cols() + i] : m.data()[i * m.cols() + j];
}

// Equal as bit patterns: tells -0 from +0 and compares NaNs.
bool bitwise_equal(const matrix& x, const matrix& y) {
  return std::equal(x.data().begin(), x.data().end(), y.data().begin(), y.data().end(),
                    [](float u, float v) {
                      return std::bit_cast<std::uint32_t>(u) == std::bit_cast<std::uint32_t>(v);
                    });
}

// Uniform values with every fifth one a zero of either sign, so that the
// sign of zero sums is checked too.
matrix operand(std::mt19937_64& gen, std::int64_t rows, std::int64_t cols) {
  matrix m = random_matrix(gen, rows, cols);
  std::uniform_int_distribution<int> pick(0, 9);
  for (float& v : m.data()) {
    const int p = pick(gen);
    if (p == 0) v = 0.0f;
    if (p == 1) v = -0.0f;
  }
  return m;
}

struct gemm_case {
  std::int64_t m, n, k;
  float alpha, beta;
};

matrix absolute(const matrix& x) {
  matrix y = x;
  for (float& v : y.data()) v = std::abs(v);
  return y;
}

// Within the rounding any summation order may give: k + 2 roundings of at
// most one float ulp each, relative to the sum of the magnitudes.
void expect_matches_reference(std::mt19937_64& gen, const gemm_case& g) {
  for (const bool ta : {false, true})
    for (const bool tb : {false, true}) {
      const matrix a = ta ? operand(gen, g.k, g.m) : operand(gen, g.m, g.k);
      const matrix b = tb ? operand(gen, g.n, g.k) : operand(gen, g.k, g.n);
      matrix c = operand(gen, g.m, g.n);
      matrix expected = c;
      matrix magnitude = absolute(c);
      gemm(ta, tb, g.alpha, a.view(), b.view(), g.beta, c.view());
      gemm_reference(ta, tb, g.alpha, a.view(), b.view(), g.beta, expected.view());
      gemm_reference(ta, tb, std::abs(g.alpha), absolute(a).view(), absolute(b).view(),
                     std::abs(g.beta), magnitude.view());
      const float ulp = std::numeric_limits<float>::epsilon();
      for (std::size_t i = 0; i < c.data().size(); ++i)
        ASSERT_NEAR(c.data()[i], expected.data()[i],
                    static_cast<float>(g.k + 2) * ulp * magnitude.data()[i] + 1e-30f)
            << gemm_threads() << " threads, " << g.m << "x" << g.n << "x" << g.k << " transposes "
            << ta << tb << " alpha " << g.alpha << " beta " << g.beta << " element " << i;
    }
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

// Sizes of 0, 1, odd, and across tile boundaries (row tiles of 128 and
// more, column tiles of 128 to 256), serial and threaded.
TEST(Gemm, MatchesTheReferenceForEveryShapeAndScaling) {
  const gemm_threads_guard guard;
  std::mt19937_64 gen(3);
  const std::tuple<std::int64_t, std::int64_t, std::int64_t> shapes[] = {
      {0, 5, 3},      {5, 0, 3},       {4, 3, 0},     {1, 1, 1},     {1, 17, 1},
      {13, 1, 300},   {7, 33, 257},    {6, 16, 256},  {12, 32, 64},  {97, 45, 513},
      {131, 300, 70}, {200, 37, 1000}, {5, 260, 600}, {300, 520, 40}};
  const std::pair<float, float> scalings[] = {{1.0f, 0.0f}, {1.0f, 1.0f}, {-1.5f, 0.25f}};
  for (const int threads : {1, 3}) {
    set_gemm_threads(threads);
    for (const auto& [m, n, k] : shapes)
      for (const auto& [alpha, beta] : scalings)
        expect_matches_reference(gen, {m, n, k, alpha, beta});
  }
}

TEST(Gemm, EmptyInnerDimensionGivesBetaTimesCAndZeroBetaIgnoresNaN) {
  matrix a(3, 0), b(0, 2), c(3, 2);
  std::fill(c.data().begin(), c.data().end(), std::numeric_limits<float>::quiet_NaN());
  gemm(false, false, 1.0f, a.view(), b.view(), 0.0f, c.view());
  for (const float v : c.data()) EXPECT_EQ(v, 0.0f);
  std::fill(c.data().begin(), c.data().end(), 3.0f);
  gemm(false, false, 1.0f, a.view(), b.view(), 0.5f, c.view());
  for (const float v : c.data()) EXPECT_EQ(v, 1.5f);
}

TEST(Gemm, ZeroBetaIgnoresNaNInCWithALongK) {
  std::mt19937_64 gen(4);
  const matrix a = random_matrix(gen, 50, 700);
  const matrix b = random_matrix(gen, 700, 40);
  matrix c(50, 40);
  std::fill(c.data().begin(), c.data().end(), std::numeric_limits<float>::quiet_NaN());
  matrix expected(50, 40);
  gemm(false, false, 1.0f, a.view(), b.view(), 0.0f, c.view());
  gemm_reference(false, false, 1.0f, a.view(), b.view(), 0.0f, expected.view());
  for (std::size_t i = 0; i < c.data().size(); ++i)
    EXPECT_NEAR(c.data()[i], expected.data()[i], 1e-4f) << i;
}

TEST(Gemm, RejectsMismatchedShapesNamingThem) {
  matrix a(3, 4), b(5, 2), c(3, 2);
  try {
    gemm(false, false, 1.0f, a.view(), b.view(), 0.0f, c.view());
    FAIL();
  } catch (const option_error& e) {
    EXPECT_NE(std::string(e.what()).find("gemm: op(A) is 3x4, op(B) is 5x2"), std::string::npos)
        << e.what();
  }
}

TEST(Gemm, RejectsThreadCountBelowOneNamingTheFunction) {
  try {
    set_gemm_threads(0);
    FAIL();
  } catch (const option_error& e) {
    EXPECT_NE(std::string(e.what()).find("set_gemm_threads"), std::string::npos) << e.what();
  }
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

// Bit for bit, for every thread count, on shapes cut into row tiles (the
// activations), column tiles (a weight gradient over a long K) and both.
TEST(Gemm, ResultDoesNotDependOnGemmThreads) {
  const gemm_threads_guard guard;
  std::mt19937_64 gen(2);
  const std::tuple<std::int64_t, std::int64_t, std::int64_t> shapes[] = {
      {200, 150, 1000}, {3000, 256, 64}, {256, 256, 3000}, {97, 45, 513}};
  for (const auto& [m, n, k] : shapes)
    for (const bool ta : {false, true})
      for (const bool tb : {false, true}) {
        const matrix a = ta ? random_matrix(gen, k, m) : random_matrix(gen, m, k);
        const matrix b = tb ? random_matrix(gen, n, k) : random_matrix(gen, k, n);
        matrix one(m, n);
        set_gemm_threads(1);
        gemm(ta, tb, 1.0f, a.view(), b.view(), 0.0f, one.view());
        for (const int threads : {2, 3, 5}) {
          matrix many(m, n);
          set_gemm_threads(threads);
          gemm(ta, tb, 1.0f, a.view(), b.view(), 0.0f, many.view());
          EXPECT_TRUE(bitwise_equal(one, many)) << m << "x" << n << "x" << k << " transposes " << ta
                                                << tb << ", " << threads << " threads";
        }
      }
}

// OpenBLAS's own thread count, set by anyone else in the process, must not
// reach the result: gemm() runs OpenBLAS on one thread per tile.
TEST(Gemm, ResultDoesNotDependOnOpenBlasThreadsSetElsewhere) {
  const gemm_threads_guard guard;
  std::mt19937_64 gen(5);
  const matrix a = random_matrix(gen, 700, 900);
  const matrix b = random_matrix(gen, 900, 300);
  matrix one(700, 300), other(700, 300);
  set_gemm_threads(1);
  gemm(false, false, 1.0f, a.view(), b.view(), 0.0f, one.view());
  openblas_set_num_threads(2);
  gemm(false, false, 1.0f, a.view(), b.view(), 0.0f, other.view());
  EXPECT_TRUE(bitwise_equal(one, other));
  EXPECT_EQ(openblas_get_num_threads(), 1);
}

}  // namespace
}  // namespace bulkgnn::trainer
