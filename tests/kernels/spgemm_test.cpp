#include "bulkgnn/kernels/spgemm.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <numeric>

#include "bulkgnn/core/error.hpp"
#include "test_support.hpp"

namespace bulkgnn::kernels {
namespace {

using testing::cpu_exec;
using testing::reference_exec;

std::vector<std::vector<double>> dense_product(const std::vector<std::vector<double>>& a,
                                               const std::vector<std::vector<double>>& b,
                                               std::size_t cols) {
  std::vector<std::vector<double>> c(a.size(), std::vector<double>(cols, 0.0));
  for (std::size_t i = 0; i < a.size(); ++i)
    for (std::size_t k = 0; k < b.size(); ++k)
      for (std::size_t j = 0; j < cols; ++j) c[i][j] += a[i][k] * b[k][j];
  return c;
}

// Every stored entry matches the dense value, every nonzero of the dense
// matrix is stored, and each row's columns are strictly increasing.
void expect_matches_dense(const csr_matrix& m, const std::vector<std::vector<double>>& dense) {
  ASSERT_EQ(m.rows, static_cast<std::int64_t>(dense.size()));
  for (std::int64_t i = 0; i < m.rows; ++i) {
    const auto columns = m.view().row(i);
    EXPECT_TRUE(std::adjacent_find(columns.begin(), columns.end(), std::greater_equal<>()) ==
                columns.end());
    std::vector<double> row(static_cast<std::size_t>(m.cols), 0.0);
    for (std::size_t e = 0; e < columns.size(); ++e) row[columns[e]] = m.view().row_values(i)[e];
    for (std::size_t j = 0; j < row.size(); ++j)
      EXPECT_NEAR(row[j], dense[i][j], 1e-5 * (1.0 + std::abs(dense[i][j])));
  }
}

struct operand_pair {
  csr_matrix a;
  csr_matrix b;
};

operand_pair random_product_operands(std::mt19937_64& gen, int round) {
  const std::int64_t inner = 1 + round * 7;
  return {testing::random_csr(gen, {.rows = 1 + round * 5,
                                    .cols = inner,
                                    .mean_degree = 1 + round,
                                    .weighted = round % 2 == 0,
                                    .repeats = round % 3 == 0}),
          testing::random_csr(gen, {.rows = inner,
                                    .cols = 1 + round * 9,
                                    .mean_degree = 2 + round,
                                    .weighted = round % 4 < 2,
                                    .empty_rows = 0.3})};
}

TEST(Spgemm, MatchesDenseProduct) {
  std::mt19937_64 gen(1);
  for (int round = 0; round < 15; ++round) {
    const auto [a, b] = random_product_operands(gen, round);
    const auto expected = dense_product(testing::to_dense(a.view()), testing::to_dense(b.view()),
                                        static_cast<std::size_t>(b.cols));
    for (const auto& exec : {reference_exec, cpu_exec}) {
      const auto c = spgemm(exec, a.view(), b.view());
      EXPECT_EQ(c.cols, b.cols);
      expect_matches_dense(c, expected);
    }
  }
}

TEST(Spgemm, CpuMatchesReferenceBitForBit) {
  std::mt19937_64 gen(2);
  for (int round = 0; round < 30; ++round) {
    const auto [a, b] = random_product_operands(gen, round);
    testing::expect_identical(spgemm(reference_exec, a.view(), b.view()),
                              spgemm(cpu_exec, a.view(), b.view()));
  }
}

TEST(Spgemm, KeepsEntriesThatCancelToZero) {
  csr_matrix a = testing::single_row({1.0f, -1.0f});
  csr_matrix b;
  b.rows = 2;
  b.cols = 1;
  b.indptr = {0, 1, 2};
  b.indices = {0, 0};
  b.values = {1.0f, 1.0f};
  for (const auto& exec : {reference_exec, cpu_exec}) {
    const auto c = spgemm(exec, a.view(), b.view());
    ASSERT_EQ(c.nnz(), 1);
    EXPECT_EQ(c.values[0], 0.0f);
  }
}

TEST(Spgemm, RejectsMismatchedInnerDimension) {
  const auto a = testing::single_row({1.0f, 2.0f});
  const auto b = testing::single_row({1.0f});
  EXPECT_THROW((void)spgemm(cpu_exec, a.view(), b.view()), option_error);
}

TEST(Spgemm, RejectsColumnIndexOutOfRange) {
  auto a = testing::single_row({1.0f, 2.0f});
  a.indices[1] = 5;
  const auto b = testing::single_row({1.0f, 2.0f});
  EXPECT_THROW((void)spgemm(cpu_exec, b.view(), a.view()), option_error);
}

operand_pair random_same_shape(std::mt19937_64& gen, int round) {
  const testing::random_csr_options shape{.rows = 1 + round * 6,
                                          .cols = 1 + round * 4,
                                          .mean_degree = 1 + round,
                                          .weighted = round % 2 == 0,
                                          .repeats = round % 3 == 0};
  auto other = shape;
  other.weighted = round % 4 < 2;
  return {testing::random_csr(gen, shape), testing::random_csr(gen, other)};
}

TEST(Add, MatchesDenseSum) {
  std::mt19937_64 gen(3);
  for (int round = 0; round < 15; ++round) {
    const auto [a, b] = random_same_shape(gen, round);
    auto expected = testing::to_dense(a.view());
    const auto dense_b = testing::to_dense(b.view());
    for (std::size_t i = 0; i < expected.size(); ++i)
      for (std::size_t j = 0; j < expected[i].size(); ++j) expected[i][j] += dense_b[i][j];
    for (const auto& exec : {reference_exec, cpu_exec})
      expect_matches_dense(add(exec, a.view(), b.view()), expected);
  }
}

TEST(Add, CpuMatchesReferenceBitForBit) {
  std::mt19937_64 gen(4);
  for (int round = 0; round < 30; ++round) {
    const auto [a, b] = random_same_shape(gen, round);
    testing::expect_identical(add(reference_exec, a.view(), b.view()),
                              add(cpu_exec, a.view(), b.view()));
  }
}

TEST(Add, RejectsMismatchedShapesAndUnsortedRows) {
  const auto a = testing::single_row({1.0f, 2.0f});
  const auto b = testing::single_row({1.0f});
  EXPECT_THROW((void)add(cpu_exec, a.view(), b.view()), option_error);
  auto unsorted = testing::single_row({1.0f, 2.0f});
  std::swap(unsorted.indices[0], unsorted.indices[1]);
  EXPECT_THROW((void)add(cpu_exec, a.view(), unsorted.view()), option_error);
}

TEST(NormalizeRows, EveryNonzeroRowSumsToOne) {
  std::mt19937_64 gen(5);
  for (const auto& exec : {reference_exec, cpu_exec}) {
    auto m = testing::random_csr(gen, {.rows = 2000, .cols = 300, .mean_degree = 8});
    // A zero among positive values must not disturb the row's normalisation.
    m.values[0] = 0.0f;
    normalize_rows(exec, m);
    for (std::int64_t i = 0; i < m.rows; ++i) {
      const auto values = m.view().row_values(i);
      const double sum = std::accumulate(values.begin(), values.end(), 0.0);
      if (std::all_of(values.begin(), values.end(), [](float v) { return v == 0.0f; })) continue;
      EXPECT_NEAR(sum, 1.0, 1e-6);
    }
  }
}

TEST(NormalizeRows, LeavesZeroRowsAlone) {
  auto m = testing::single_row({0.0f, 0.0f});
  for (const auto& exec : {reference_exec, cpu_exec}) {
    normalize_rows(exec, m);
    EXPECT_EQ(m.values, (std::vector<float>{0.0f, 0.0f}));
  }
}

TEST(NormalizeRows, CpuMatchesReferenceBitForBit) {
  std::mt19937_64 gen(6);
  for (int round = 0; round < 10; ++round) {
    const auto m =
        testing::random_csr(gen, {.rows = 100 * round + 1, .cols = 50, .mean_degree = 3 + round});
    auto expected = m;
    auto actual = m;
    normalize_rows(reference_exec, expected);
    normalize_rows(cpu_exec, actual);
    testing::expect_identical(expected, actual);
  }
}

TEST(NormalizeRows, RejectsPatternMatrix) {
  auto m = testing::single_row({1.0f, 2.0f});
  m.values.clear();
  EXPECT_THROW(normalize_rows(cpu_exec, m), option_error);
}

}  // namespace
}  // namespace bulkgnn::kernels
