#include "bulkgnn/kernels/gather_rows.hpp"

#include <gtest/gtest.h>

#include "bulkgnn/core/error.hpp"
#include "test_support.hpp"

namespace bulkgnn::kernels {
namespace {

using testing::cpu_exec;
using testing::reference_exec;

TEST(GatherRows, RowIIsRowRowsIOfTheMatrix) {
  std::mt19937_64 gen(1);
  const auto a = testing::random_csr(gen, {.rows = 30, .cols = 20});
  const std::vector<vertex_t> rows{4, 4, 0, 29, 17, 4};
  for (const auto& exec : {reference_exec, cpu_exec}) {
    const auto g = gather_rows(exec, a.view(), rows);
    ASSERT_EQ(g.rows, static_cast<std::int64_t>(rows.size()));
    EXPECT_EQ(g.cols, a.cols);
    for (std::size_t i = 0; i < rows.size(); ++i) {
      const auto got = g.view().row(static_cast<std::int64_t>(i));
      const auto want = a.view().row(rows[i]);
      EXPECT_TRUE(std::equal(got.begin(), got.end(), want.begin(), want.end()));
      const auto got_values = g.view().row_values(static_cast<std::int64_t>(i));
      const auto want_values = a.view().row_values(rows[i]);
      EXPECT_TRUE(
          std::equal(got_values.begin(), got_values.end(), want_values.begin(), want_values.end()));
    }
  }
}

TEST(GatherRows, CpuMatchesReferenceOnRandomInputs) {
  std::mt19937_64 gen(2);
  for (int round = 0; round < 20; ++round) {
    const auto a = testing::random_csr(gen, {.rows = 1 + round * 37,
                                             .cols = 1 + round * 11,
                                             .weighted = round % 2 == 0,
                                             .repeats = round % 3 == 0,
                                             .empty_rows = 0.3});
    std::uniform_int_distribution<vertex_t> row(0, static_cast<vertex_t>(a.rows - 1));
    std::vector<vertex_t> rows(static_cast<std::size_t>(round * 50));
    for (auto& r : rows) r = row(gen);
    testing::expect_identical(gather_rows(reference_exec, a.view(), rows),
                              gather_rows(cpu_exec, a.view(), rows));
  }
}

TEST(GatherRows, AcceptsAViewOfARowRangeOfALargerMatrix) {
  std::mt19937_64 gen(3);
  const auto a = testing::random_csr(gen, {.rows = 10, .cols = 10, .empty_rows = 0.0});
  const auto whole = a.view();
  // Rows 4..9 of a: indptr keeps its absolute offsets.
  const csr_view tail{6, 10, whole.indptr.subspan(4), whole.indices.subspan(a.indptr[4]),
                      whole.values.subspan(a.indptr[4])};
  const std::vector<vertex_t> rows{0, 5};
  for (const auto& exec : {reference_exec, cpu_exec})
    testing::expect_identical(gather_rows(exec, whole, std::vector<vertex_t>{4, 9}),
                              gather_rows(exec, tail, rows));
}

TEST(GatherRows, RejectsRowOutOfRange) {
  const auto a = testing::single_row({1.0f});
  for (const auto& exec : {reference_exec, cpu_exec}) {
    EXPECT_THROW((void)gather_rows(exec, a.view(), std::vector<vertex_t>{1}), option_error);
    EXPECT_THROW((void)gather_rows(exec, a.view(), std::vector<vertex_t>{-1}), option_error);
  }
}

}  // namespace
}  // namespace bulkgnn::kernels
