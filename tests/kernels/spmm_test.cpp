#include "bulkgnn/kernels/spmm.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <numeric>

#include "bulkgnn/core/error.hpp"
#include "test_support.hpp"

namespace bulkgnn::kernels {
namespace {

using testing::cpu_exec;
using testing::reference_exec;

using testing::dense_matrix;

// Values in [-2, 2).
dense_matrix wide_random_dense(std::mt19937_64& gen, std::int64_t rows, std::int64_t cols) {
  return testing::random_dense(gen, rows, cols, -2.0f, 2.0f);
}

// Rows [first, last) of m, as a view whose indptr starts above 0.
csr_view row_slice(const csr_matrix& m, std::int64_t first, std::int64_t last) {
  const auto begin = static_cast<std::size_t>(m.indptr[first]);
  const auto size = static_cast<std::size_t>(m.indptr[last] - m.indptr[first]);
  return {last - first, m.cols,
          std::span<const edge_t>(m.indptr).subspan(static_cast<std::size_t>(first),
                                                    static_cast<std::size_t>(last - first + 1)),
          std::span<const vertex_t>(m.indices).subspan(begin, size),
          m.values.empty() ? std::span<const float>{}
                           : std::span<const float>(m.values).subspan(begin, size)};
}

csr_matrix copy_of(csr_view v) {
  csr_matrix m;
  m.rows = v.rows;
  m.cols = v.cols;
  m.indptr.clear();
  for (const edge_t p : v.indptr) m.indptr.push_back(p - v.indptr.front());
  m.indices.assign(v.indices.begin(), v.indices.end());
  m.values.assign(v.values.begin(), v.values.end());
  return m;
}

dense_matrix spmm_on(const executor& exec, csr_view a, const dense_matrix& x) {
  dense_matrix y(a.rows, x.cols, 12345.0f);  // garbage that must be overwritten
  spmm(exec, a, x.view(), y.mut());
  return y;
}

void expect_spmm_identical(csr_view a, const dense_matrix& x) {
  const auto expected = spmm_on(reference_exec, a, x);
  const auto actual = spmm_on(cpu_exec, a, x);
  EXPECT_EQ(testing::bits(expected.data), testing::bits(actual.data));
}

testing::random_csr_options random_shape(int round) {
  return {.rows = 1 + round * 37,
          .cols = 1 + round * 23,
          .mean_degree = 1 + round % 7,
          .weighted = round % 2 == 0,
          .repeats = round % 3 == 0,
          .empty_rows = round % 4 == 0 ? 0.5 : 0.1};
}

TEST(Spmm, HandComputedExample) {
  csr_matrix a;
  a.rows = 3;
  a.cols = 3;
  a.indptr = {0, 2, 2, 3};
  a.indices = {0, 2, 1};
  a.values = {2.0f, 3.0f, -1.0f};
  dense_matrix x(3, 2);
  x.data = {1, 2, 3, 4, 5, 6};
  for (const auto& exec : {reference_exec, cpu_exec}) {
    EXPECT_EQ(spmm_on(exec, a.view(), x).data, (std::vector<float>{17, 22, 0, 0, -3, -4}));
    auto pattern = a;
    pattern.values.clear();
    EXPECT_EQ(spmm_on(exec, pattern.view(), x).data, (std::vector<float>{6, 8, 0, 0, 3, 4}));
  }
}

TEST(Spmm, CpuMatchesReferenceBitForBit) {
  std::mt19937_64 gen(11);
  for (int round = 0; round < 24; ++round) {
    const auto a = testing::random_csr(gen, random_shape(round));
    for (const std::int64_t width : {1, 3, 16, 67, 256}) {
      const auto x = wide_random_dense(gen, a.cols, width);
      expect_spmm_identical(a.view(), x);
    }
  }
}

TEST(Spmm, ManyRowsHighDegreeBitForBit) {
  std::mt19937_64 gen(12);
  for (const bool weighted : {false, true}) {
    const auto a = testing::random_csr(
        gen, {.rows = 3000, .cols = 800, .mean_degree = 40, .weighted = weighted, .repeats = true});
    expect_spmm_identical(a.view(), wide_random_dense(gen, a.cols, 33));
  }
}

TEST(Spmm, EmptyOperands) {
  for (const auto& exec : {reference_exec, cpu_exec}) {
    const csr_matrix nothing;  // 0 × 0
    EXPECT_TRUE(spmm_on(exec, nothing.view(), dense_matrix(0, 5)).data.empty());
    csr_matrix empty_rows;
    empty_rows.rows = 4;
    empty_rows.cols = 0;
    empty_rows.indptr = {0, 0, 0, 0, 0};
    EXPECT_EQ(spmm_on(exec, empty_rows.view(), dense_matrix(0, 3)).data,
              std::vector<float>(12, 0.0f));
    std::mt19937_64 gen(13);
    const auto a = testing::random_csr(gen, {.rows = 7, .cols = 9});
    EXPECT_TRUE(spmm_on(exec, a.view(), dense_matrix(9, 0)).data.empty());
  }
}

TEST(Spmm, ViewOfSomeRowsMatchesCopy) {
  std::mt19937_64 gen(14);
  for (const bool weighted : {false, true}) {
    const auto m = testing::random_csr(gen, {.rows = 600, .cols = 90, .weighted = weighted});
    const auto slice = row_slice(m, 137, 521);
    ASSERT_GT(slice.indptr.front(), 0);
    const auto x = wide_random_dense(gen, m.cols, 19);
    expect_spmm_identical(slice, x);
    const auto copy = copy_of(slice);
    EXPECT_EQ(testing::bits(spmm_on(cpu_exec, slice, x).data),
              testing::bits(spmm_on(reference_exec, copy.view(), x).data));
  }
}

TEST(Spmm, RejectsWrongShapes) {
  const auto a = testing::single_row({1.0f, 2.0f});  // 1 × 2
  const dense_matrix x(2, 3);
  dense_matrix y(1, 3);
  for (const auto& exec : {reference_exec, cpu_exec}) {
    EXPECT_NO_THROW(spmm(exec, a.view(), x.view(), y.mut()));
    EXPECT_THROW(spmm(exec, a.view(), dense_matrix(3, 3).view(), y.mut()), error);
    dense_matrix wrong_rows(2, 3);
    EXPECT_THROW(spmm(exec, a.view(), x.view(), wrong_rows.mut()), error);
    dense_matrix wrong_cols(1, 2);
    EXPECT_THROW(spmm(exec, a.view(), x.view(), wrong_cols.mut()), error);
    // A view claiming more elements than it holds.
    const dense_view<const float> short_x{2, 4, x.data};
    dense_matrix y4(1, 4);
    EXPECT_THROW(spmm(exec, a.view(), short_x, y4.mut()), error);
  }
}

TEST(Spmm, RejectsBadMatrixAndAliasing) {
  auto a = testing::single_row({1.0f, 2.0f});
  a.indices[1] = 7;
  const dense_matrix x(2, 3);
  dense_matrix y(1, 3);
  EXPECT_THROW(spmm(cpu_exec, a.view(), x.view(), y.mut()), error);
  // y written over x.
  csr_matrix square;
  square.rows = 2;
  square.cols = 2;
  square.indptr = {0, 1, 2};
  square.indices = {1, 0};
  dense_matrix z(2, 3);
  EXPECT_THROW(spmm(cpu_exec, square.view(), z.view(), z.mut()), error);
}

TEST(Spmm, RejectsCudaBackend) {
  const auto a = testing::single_row({1.0f});
  const dense_matrix x(1, 1);
  dense_matrix y(1, 1);
  EXPECT_THROW(spmm(executor{backend::cuda}, a.view(), x.view(), y.mut()), error);
}

std::vector<float> sddmm_on(const executor& exec, csr_view pattern, const dense_matrix& a,
                            const dense_matrix& b) {
  std::vector<float> out(static_cast<std::size_t>(pattern.nnz()), 12345.0f);
  sddmm(exec, pattern, a.view(), b.view(), out);
  return out;
}

TEST(Sddmm, HandComputedExampleIgnoresThePatternsValues) {
  csr_matrix p;
  p.rows = 2;
  p.cols = 3;
  p.indptr = {0, 2, 3};
  p.indices = {2, 0, 2};  // a repeated column in another row
  p.values = {9.0f, 9.0f, 9.0f};
  dense_matrix a(2, 2);
  a.data = {1, 2, -1, 0.5f};
  dense_matrix b(3, 2);
  b.data = {3, 4, 5, 6, 7, 8};
  for (const auto& exec : {reference_exec, cpu_exec})
    EXPECT_EQ(sddmm_on(exec, p.view(), a, b), (std::vector<float>{23, 11, -3}));
}

// Against its definition summed in double (every sum here is exact in float
// too: small integers), and the cpu against the reference bit for bit on
// random values, slices with an offset indptr included.
TEST(Sddmm, EachEntryIsTheDotOfItsRowOfAAndColumnsRowOfB) {
  std::mt19937_64 gen(21);
  std::uniform_int_distribution<int> small(-8, 8);
  for (int round = 0; round < 12; ++round) {
    const auto p = testing::random_csr(gen, random_shape(round));
    for (const std::int64_t width : {1, 5, 64}) {
      dense_matrix a(p.rows, width);
      dense_matrix b(p.cols, width);
      for (auto& v : a.data) v = static_cast<float>(small(gen));
      for (auto& v : b.data) v = static_cast<float>(small(gen));
      const auto out = sddmm_on(cpu_exec, p.view(), a, b);
      std::size_t e = 0;
      for (std::int64_t r = 0; r < p.rows; ++r)
        for (const vertex_t c : p.view().row(r)) {
          double dot = 0;
          for (std::int64_t k = 0; k < width; ++k)
            dot += static_cast<double>(a.view().row(r)[k]) * b.view().row(c)[k];
          ASSERT_EQ(out[e++], static_cast<float>(dot)) << "round " << round << " row " << r;
        }
      const auto wide_a = wide_random_dense(gen, p.rows, width);
      const auto wide_b = wide_random_dense(gen, p.cols, width);
      EXPECT_EQ(testing::bits(sddmm_on(cpu_exec, p.view(), wide_a, wide_b)),
                testing::bits(sddmm_on(reference_exec, p.view(), wide_a, wide_b)));
    }
  }
  const auto m = testing::random_csr(gen, {.rows = 600, .cols = 90, .mean_degree = 6});
  const auto slice = row_slice(m, 137, 521);
  ASSERT_GT(slice.indptr.front(), 0);
  const auto a = wide_random_dense(gen, slice.rows, 13);
  const auto b = wide_random_dense(gen, slice.cols, 13);
  const auto copy = copy_of(slice);
  EXPECT_EQ(testing::bits(sddmm_on(cpu_exec, slice, a, b)),
            testing::bits(sddmm_on(reference_exec, copy.view(), a, b)));
}

TEST(Sddmm, RejectsWrongShapesAndAliasing) {
  std::mt19937_64 gen(22);
  const auto p = testing::random_csr(gen, {.rows = 6, .cols = 9, .mean_degree = 3});
  const auto a = wide_random_dense(gen, 6, 4);
  const auto b = wide_random_dense(gen, 9, 4);
  std::vector<float> out(static_cast<std::size_t>(p.nnz()));
  EXPECT_THROW(sddmm(cpu_exec, p.view(), b.view(), b.view(), out), option_error);
  EXPECT_THROW(sddmm(cpu_exec, p.view(), a.view(), wide_random_dense(gen, 9, 3).view(), out),
               option_error);
  std::vector<float> short_out(out.size() - 1);
  EXPECT_THROW(sddmm(cpu_exec, p.view(), a.view(), b.view(), short_out), option_error);
  auto aliased = wide_random_dense(gen, 9, 4);
  EXPECT_THROW(sddmm(cpu_exec, p.view(), a.view(), aliased.view(),
                     std::span<float>(aliased.data).first(out.size())),
               option_error);
}

TEST(Transpose, HandComputedExampleKeepsRowOrderAndRepeats) {
  csr_matrix a;
  a.rows = 3;
  a.cols = 3;
  a.indptr = {0, 3, 3, 5};
  a.indices = {0, 2, 2, 0, 2};
  a.values = {1.0f, 2.0f, 3.0f, 4.0f, 5.0f};
  for (const auto& exec : {reference_exec, cpu_exec}) {
    const auto t = transpose(exec, a.view());
    EXPECT_EQ(t.rows, 3);
    EXPECT_EQ(t.cols, 3);
    EXPECT_EQ(t.indptr, (std::vector<edge_t>{0, 2, 2, 5}));
    EXPECT_EQ(t.indices, (std::vector<vertex_t>{0, 2, 0, 0, 2}));
    EXPECT_EQ(t.values, (std::vector<float>{1.0f, 4.0f, 2.0f, 3.0f, 5.0f}));
  }
}

TEST(Transpose, CpuMatchesReferenceAndInverts) {
  std::mt19937_64 gen(21);
  for (int round = 0; round < 24; ++round) {
    const auto a = testing::random_csr(gen, random_shape(round));
    const auto expected = transpose(reference_exec, a.view());
    const auto t = transpose(cpu_exec, a.view());
    testing::expect_identical(expected, t);
    EXPECT_EQ(t.rows, a.cols);
    EXPECT_EQ(t.cols, a.rows);
    for (const auto& exec : {reference_exec, cpu_exec})
      testing::expect_identical(a, transpose(exec, t.view()));
  }
}

TEST(Transpose, LargeMatrixUsesManyChunks) {
  std::mt19937_64 gen(22);
  for (const bool weighted : {false, true}) {
    for (const std::int64_t cols : {std::int64_t{50}, std::int64_t{5000}}) {
      const auto a = testing::random_csr(gen, {.rows = 4000,
                                               .cols = cols,
                                               .mean_degree = 20,
                                               .weighted = weighted,
                                               .repeats = true,
                                               .empty_rows = 0.2});
      const auto t = transpose(cpu_exec, a.view());
      testing::expect_identical(transpose(reference_exec, a.view()), t);
      testing::expect_identical(a, transpose(cpu_exec, t.view()));
    }
  }
}

TEST(Transpose, EmptyMatricesAndViews) {
  for (const auto& exec : {reference_exec, cpu_exec}) {
    const csr_matrix nothing;
    const auto t = transpose(exec, nothing.view());
    EXPECT_EQ(t.rows, 0);
    EXPECT_EQ(t.indptr, std::vector<edge_t>{0});
    csr_matrix no_entries;
    no_entries.rows = 3;
    no_entries.cols = 4;
    no_entries.indptr = {0, 0, 0, 0};
    const auto u = transpose(exec, no_entries.view());
    EXPECT_EQ(u.rows, 4);
    EXPECT_EQ(u.cols, 3);
    EXPECT_EQ(u.indptr, std::vector<edge_t>(5, 0));
  }
  std::mt19937_64 gen(23);
  for (const bool weighted : {false, true}) {
    const auto m = testing::random_csr(
        gen, {.rows = 3000, .cols = 300, .mean_degree = 8, .weighted = weighted, .repeats = true});
    const auto slice = row_slice(m, 1001, 2777);
    const auto copy = copy_of(slice);
    const auto expected = transpose(reference_exec, copy.view());
    testing::expect_identical(expected, transpose(reference_exec, slice));
    testing::expect_identical(expected, transpose(cpu_exec, slice));
  }
}

TEST(Transpose, SpmmWithTransposeMatchesDense) {
  std::mt19937_64 gen(24);
  for (int round = 0; round < 10; ++round) {
    const auto a = testing::random_csr(gen, random_shape(round));
    const auto x = wide_random_dense(gen, a.rows, 5);
    const auto dense_a = testing::to_dense(a.view());
    for (const auto& exec : {reference_exec, cpu_exec}) {
      const auto t = transpose(exec, a.view());
      const auto y = spmm_on(exec, t.view(), x);
      for (std::int64_t c = 0; c < a.cols; ++c)
        for (std::int64_t j = 0; j < x.cols; ++j) {
          double expected = 0.0;
          for (std::int64_t r = 0; r < a.rows; ++r) expected += dense_a[r][c] * x.at(r, j);
          EXPECT_NEAR(y.at(c, j), expected, 1e-4 * (1.0 + std::abs(expected)));
        }
    }
  }
}

TEST(Transpose, RejectsMalformedMatrix) {
  auto a = testing::single_row({1.0f, 2.0f});
  a.indices[0] = -1;
  EXPECT_THROW((void)transpose(cpu_exec, a.view()), error);
  auto b = testing::single_row({1.0f, 2.0f});
  b.values.pop_back();
  EXPECT_THROW((void)transpose(reference_exec, b.view()), error);
}

TEST(GatherDenseRows, MatchesDirectCopy) {
  std::mt19937_64 gen(31);
  for (const std::int64_t width : {0, 1, 7, 130}) {
    const auto x = wide_random_dense(gen, 500, width);
    std::uniform_int_distribution<vertex_t> pick(0, 499);
    std::vector<vertex_t> rows(1200);
    for (auto& r : rows) r = pick(gen);
    rows[0] = 0;
    rows[1] = 499;
    rows[2] = rows[3];  // repeats are fine
    for (const auto& exec : {reference_exec, cpu_exec}) {
      dense_matrix out(static_cast<std::int64_t>(rows.size()), width, -1.0f);
      gather_dense_rows(exec, x.view(), rows, out.mut());
      for (std::size_t i = 0; i < rows.size(); ++i)
        for (std::int64_t j = 0; j < width; ++j)
          ASSERT_EQ(std::bit_cast<std::uint32_t>(out.at(static_cast<std::int64_t>(i), j)),
                    std::bit_cast<std::uint32_t>(x.at(rows[i], j)));
    }
  }
}

TEST(GatherDenseRows, NoRows) {
  const dense_matrix x(3, 4);
  dense_matrix out(0, 4);
  for (const auto& exec : {reference_exec, cpu_exec})
    EXPECT_NO_THROW(gather_dense_rows(exec, x.view(), {}, out.mut()));
}

TEST(GatherDenseRows, RejectsBadArguments) {
  const dense_matrix x(3, 4);
  const std::vector<vertex_t> rows{0, 2};
  for (const auto& exec : {reference_exec, cpu_exec}) {
    dense_matrix out(2, 4);
    EXPECT_NO_THROW(gather_dense_rows(exec, x.view(), rows, out.mut()));
    EXPECT_THROW(gather_dense_rows(exec, x.view(), std::vector<vertex_t>{0, 3}, out.mut()), error);
    EXPECT_THROW(gather_dense_rows(exec, x.view(), std::vector<vertex_t>{-1, 0}, out.mut()), error);
    dense_matrix wrong_rows(3, 4);
    EXPECT_THROW(gather_dense_rows(exec, x.view(), rows, wrong_rows.mut()), error);
    dense_matrix wrong_cols(2, 3);
    EXPECT_THROW(gather_dense_rows(exec, x.view(), rows, wrong_cols.mut()), error);
    dense_matrix self(4, 4);
    EXPECT_THROW(
        gather_dense_rows(exec, self.view(), std::vector<vertex_t>{0, 1, 2, 3}, self.mut()), error);
  }
}

// Each row of x, scaled, lands on its target row; the rows no id names keep
// their values; the cpu back end equals the reference bit for bit.
TEST(ScatterDenseRows, ScalesEachRowOntoItsTargetAndLeavesTheOthers) {
  std::mt19937_64 gen(33);
  for (const std::int64_t width : {0, 1, 7, 130}) {
    std::vector<vertex_t> rows(300);
    std::iota(rows.begin(), rows.end(), 0);
    std::shuffle(rows.begin(), rows.end(), gen);
    rows.resize(180);  // distinct targets among 300 rows
    const auto x = wide_random_dense(gen, 180, width);
    const float scale = 0.37f;
    dense_matrix expected(300, width, -2.0f);
    for (std::size_t i = 0; i < rows.size(); ++i)
      for (std::int64_t j = 0; j < width; ++j)
        expected.data[static_cast<std::size_t>(rows[i] * width + j)] =
            scale * x.at(static_cast<std::int64_t>(i), j);
    for (const auto& exec : {reference_exec, cpu_exec}) {
      dense_matrix out(300, width, -2.0f);
      scatter_dense_rows(exec, x.view(), rows, scale, out.mut());
      ASSERT_EQ(out.data.size(), expected.data.size());
      for (std::size_t k = 0; k < out.data.size(); ++k)
        ASSERT_EQ(std::bit_cast<std::uint32_t>(out.data[k]),
                  std::bit_cast<std::uint32_t>(expected.data[k]))
            << backend_name(exec.kind()) << " at " << k;
    }
  }
}

TEST(ScatterDenseRows, RejectsBadArguments) {
  const dense_matrix x(2, 4);
  const std::vector<vertex_t> rows{0, 2};
  for (const auto& exec : {reference_exec, cpu_exec}) {
    dense_matrix out(3, 4);
    EXPECT_NO_THROW(scatter_dense_rows(exec, x.view(), rows, 1.0f, out.mut()));
    EXPECT_THROW(scatter_dense_rows(exec, x.view(), std::vector<vertex_t>{0, 3}, 1.0f, out.mut()),
                 error);
    EXPECT_THROW(scatter_dense_rows(exec, x.view(), std::vector<vertex_t>{1, 1}, 1.0f, out.mut()),
                 error);
    dense_matrix wrong_cols(3, 5);
    EXPECT_THROW(scatter_dense_rows(exec, x.view(), rows, 1.0f, wrong_cols.mut()), error);
    EXPECT_THROW(scatter_dense_rows(exec, x.view(), std::vector<vertex_t>{0}, 1.0f, out.mut()),
                 error);
  }
}

// A cache of some rows in front of the whole table: every back end gathers
// the table's rows (a cached row equals its table row) and counts the rows
// that came from the cache.
TEST(GatherCachedRows, GathersTheTablesRowsAndCountsCacheHits) {
  std::mt19937_64 gen(32);
  const auto x = wide_random_dense(gen, 400, 9);
  const std::vector<vertex_t> hot{7, 0, 399, 123};
  dense_matrix cache(static_cast<std::int64_t>(hot.size()), 9);
  std::vector<std::int32_t> slot_of(400, -1);
  for (std::size_t slot = 0; slot < hot.size(); ++slot) {
    slot_of[hot[slot]] = static_cast<std::int32_t>(slot);
    for (std::int64_t j = 0; j < 9; ++j)
      cache.data[slot * 9 + static_cast<std::size_t>(j)] = x.at(hot[slot], j);
  }
  std::uniform_int_distribution<vertex_t> pick(0, 399);
  std::vector<vertex_t> rows(1000);
  for (auto& r : rows) r = pick(gen);
  rows[0] = 7;
  rows[1] = 399;
  rows[2] = 7;
  const auto hits = std::count_if(rows.begin(), rows.end(), [&](vertex_t v) {
    return std::find(hot.begin(), hot.end(), v) != hot.end();
  });
  dense_matrix expected(1000, 9);
  gather_dense_rows(reference_exec, x.view(), rows, expected.mut());
  const cached_rows cached{x.view(), cache.view(), slot_of};
  for (const auto& exec : {reference_exec, cpu_exec}) {
    dense_matrix out(1000, 9, -1.0f);
    EXPECT_EQ(gather_cached_rows(exec, cached, rows, out.mut()), hits);
    EXPECT_TRUE(testing::same_bits(std::span<const float>(expected.data),
                                   std::span<const float>(out.data)));
  }
}

TEST(GatherCachedRows, RejectsSlotsOutsideTheCacheAndRowsOutsideTheTable) {
  const dense_matrix x(3, 2);
  const dense_matrix cache(1, 2);
  dense_matrix out(1, 2);
  const std::vector<std::int32_t> bad_slot{-1, 1, -1};
  const std::vector<std::int32_t> good_slot{-1, 0, -1};
  for (const auto& exec : {reference_exec, cpu_exec}) {
    EXPECT_THROW((void)gather_cached_rows(exec, {x.view(), cache.view(), bad_slot},
                                          std::vector<vertex_t>{0}, out.mut()),
                 error);
    EXPECT_THROW((void)gather_cached_rows(exec, {x.view(), cache.view(), good_slot},
                                          std::vector<vertex_t>{3}, out.mut()),
                 error);
    EXPECT_EQ(gather_cached_rows(exec, {x.view(), cache.view(), good_slot},
                                 std::vector<vertex_t>{1}, out.mut()),
              1);
  }
}

}  // namespace
}  // namespace bulkgnn::kernels
