#include "bulkgnn/kernels/normalize.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>
#include <vector>

#include "bulkgnn/core/error.hpp"
#include "bulkgnn/core/parallel.hpp"
#include "test_support.hpp"

namespace bulkgnn::kernels {
namespace {

using testing::cpu_exec;
using testing::random_dense;
using testing::reference_exec;
using testing::same_bits;

TEST(Minimum, IsTheSmallestValueOnEveryBackEndAndSkipsNaN) {
  std::mt19937_64 gen(41);
  const auto x = random_dense(gen, 3000, 7, -3.0f, 5.0f);
  auto values = x.data;
  values[4321] = -7.5f;
  values[17] = std::numeric_limits<float>::quiet_NaN();
  values[0] = std::numeric_limits<float>::quiet_NaN();
  for (const auto& exec : {reference_exec, cpu_exec})
    EXPECT_EQ(minimum(exec, values), -7.5f) << backend_name(exec.kind());
  EXPECT_EQ(minimum(cpu_exec, std::span<const float>{}), std::numeric_limits<float>::infinity());
}

TEST(ShiftedRowSums, SumEachRowInColumnOrderAlikeForAnyThreadCount) {
  std::mt19937_64 gen(42);
  const auto x = random_dense(gen, 1000, 33, -1e3f, 1e3f);
  std::vector<double> expected(1000);
  for (std::int64_t r = 0; r < 1000; ++r) {
    double sum = 0;
    for (std::int64_t j = 0; j < 33; ++j)
      sum += static_cast<double>(x.data[static_cast<std::size_t>(r * 33 + j)] - 0.25f);
    expected[static_cast<std::size_t>(r)] = sum;
  }
  for (const int threads : {1, 2, 3, 5}) {
    const thread_limit limit(threads);
    for (const auto& exec : {reference_exec, cpu_exec}) {
      std::vector<double> sums(1000);
      shifted_row_sums(exec, x.view(), 0.25f, sums);
      EXPECT_EQ(sums, expected) << backend_name(exec.kind()) << ", " << threads << " threads";
    }
  }
}

TEST(ShiftAndDivideRows, DividesEachRowByItsVertexsDivisor) {
  std::mt19937_64 gen(43);
  const auto gathered = random_dense(gen, 500, 9);
  std::vector<float> divisors(2000);
  std::uniform_real_distribution<float> divisor(0.5f, 40.0f);
  for (auto& d : divisors) d = divisor(gen);
  std::vector<vertex_t> ids(500);
  std::uniform_int_distribution<vertex_t> vertex(0, 1999);
  for (auto& v : ids) v = vertex(gen);
  auto expected = gathered.data;
  for (std::size_t i = 0; i < ids.size(); ++i)
    for (std::size_t j = 0; j < 9; ++j)
      expected[i * 9 + j] =
          (expected[i * 9 + j] - -1.5f) / divisors[static_cast<std::size_t>(ids[i])];
  for (const auto& exec : {reference_exec, cpu_exec}) {
    auto rows = gathered;
    shift_and_divide_rows(exec, rows.view(), -1.5f, divisors, ids);
    EXPECT_TRUE(same_bits(rows.data, expected)) << backend_name(exec.kind());
  }
  // A whole table: row v by divisors[v].
  auto table = random_dense(gen, 2000, 3);
  auto whole = table.data;
  for (std::size_t v = 0; v < 2000; ++v)
    for (std::size_t j = 0; j < 3; ++j) whole[v * 3 + j] = (whole[v * 3 + j] - 0.0f) / divisors[v];
  shift_and_divide_rows(cpu_exec, table.view(), 0.0f, divisors);
  EXPECT_TRUE(same_bits(table.data, whole));
}

TEST(ShiftAndDivideRows, RejectsBadArguments) {
  testing::dense_matrix rows(2, 3);
  const std::vector<float> divisors{1.0f, 2.0f, 0.0f};
  for (const auto& exec : {reference_exec, cpu_exec}) {
    EXPECT_NO_THROW(
        shift_and_divide_rows(exec, rows.view(), 0.0f, divisors, std::vector<vertex_t>{0, 1}));
    EXPECT_THROW(
        shift_and_divide_rows(exec, rows.view(), 0.0f, divisors, std::vector<vertex_t>{0, 3}),
        error);
    EXPECT_THROW(
        shift_and_divide_rows(exec, rows.view(), 0.0f, divisors, std::vector<vertex_t>{0, 2}),
        error);  // a zero divisor
    EXPECT_THROW(shift_and_divide_rows(exec, rows.view(), 0.0f, divisors, std::vector<vertex_t>{0}),
                 error);
    EXPECT_THROW(shift_and_divide_rows(exec, rows.view(), 0.0f, divisors), error);  // 3 divisors
    testing::dense_matrix none(0, 3);
    EXPECT_NO_THROW(
        shift_and_divide_rows(exec, none.view(), 0.0f, divisors, std::span<const vertex_t>{}));
    std::vector<double> sums(1);
    EXPECT_THROW(shifted_row_sums(exec, rows.view(), 0.0f, sums), error);
  }
}

}  // namespace
}  // namespace bulkgnn::kernels
