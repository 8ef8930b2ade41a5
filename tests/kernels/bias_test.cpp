#include "bulkgnn/kernels/bias.hpp"

#include <gtest/gtest.h>

#include <random>

#include "bulkgnn/core/error.hpp"
#include "bulkgnn/core/parallel.hpp"
#include "test_support.hpp"

namespace bulkgnn::kernels {
namespace {

using testing::cpu_exec;
using testing::dense_matrix;
using testing::reference_exec;
using testing::same_bits;

TEST(FillRowsWithBias, EveryRowBecomesTheBias) {
  dense_matrix out(3, 2);
  const std::vector<float> bias{1.5f, -2.0f};
  for (const auto& exec : {cpu_exec, reference_exec}) {
    fill_rows_with_bias(exec, bias, out.view());
    EXPECT_EQ(out.data, (std::vector<float>{1.5f, -2.0f, 1.5f, -2.0f, 1.5f, -2.0f}));
  }
}

TEST(ColumnSums, AddEachColumnInRowOrder) {
  dense_matrix m(3, 2);
  m.data = {1.0f, 1e8f, 2.0f, 1.0f, 3.0f, -1e8f};
  std::vector<float> sums(2);
  for (const auto& exec : {cpu_exec, reference_exec}) {
    column_sums(exec, m.view(), sums);
    // (1e8 + 1) rounds to 1e8 in float before −1e8 arrives: row order, in float.
    EXPECT_EQ(sums, (std::vector<float>{6.0f, 0.0f}));
  }
}

TEST(ColumnSums, CpuEqualsTheReferenceBitForBit) {
  std::mt19937_64 gen(2);
  for (const int threads : {1, 2, 3, 5}) {
    const thread_limit limit(threads);
    for (const auto& [rows, cols] : {std::pair<std::int64_t, std::int64_t>{0, 5},
                                     {1, 1},
                                     {17, 300},
                                     {1000, 256},
                                     {20000, 47},
                                     {4000, 129}}) {
      const dense_matrix m = testing::random_dense(gen, rows, cols, -10.0f, 10.0f);
      std::vector<float> cpu(static_cast<std::size_t>(cols), 7.0f), reference(cpu.size());
      column_sums(cpu_exec, m.view(), cpu);
      column_sums(reference_exec, m.view(), reference);
      EXPECT_TRUE(same_bits(cpu, reference)) << rows << "x" << cols << ", " << threads;
      dense_matrix filled_cpu(rows, cols), filled_reference(rows, cols);
      fill_rows_with_bias(cpu_exec, cpu, filled_cpu.view());
      fill_rows_with_bias(reference_exec, cpu, filled_reference.view());
      EXPECT_TRUE(same_bits(filled_cpu.data, filled_reference.data));
    }
  }
}

TEST(ColumnSums, RejectsSumsOfAnotherSizeNamingThem) {
  dense_matrix m(3, 2);
  std::vector<float> sums(3);
  try {
    column_sums(cpu_exec, m.view(), sums);
    FAIL();
  } catch (const option_error& e) {
    EXPECT_NE(std::string(e.what()).find("column_sums: sums has 3 entries"), std::string::npos)
        << e.what();
  }
  EXPECT_THROW(fill_rows_with_bias(cpu_exec, sums, m.view()), option_error);
}

}  // namespace
}  // namespace bulkgnn::kernels
