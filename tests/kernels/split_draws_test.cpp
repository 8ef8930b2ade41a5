// Weighted sampling without replacement over rows split by column: every
// rank's smallest_keyed_entries, merged by take_smallest_keys, give exactly
// what sample_rows draws from the whole rows, on both back ends.
#include "bulkgnn/core/error.hpp"
#include "bulkgnn/kernels/frontier.hpp"
#include "bulkgnn/kernels/relabel.hpp"
#include "bulkgnn/kernels/sample_rows.hpp"
#include "test_support.hpp"

#include <gtest/gtest.h>

#include <numeric>
#include <random>

namespace bulkgnn::kernels {
namespace {

using testing::cpu_exec;
using testing::expect_identical;
using testing::reference_exec;

// Draws every row of `a` split over `ranks` column ranges, as sample_slices
// does: each part's candidates start at the entries before it.
csr_matrix draw_split(const executor& exec, const csr_matrix& a, std::span<const vertex_t> rows,
                      const row_streams& streams, std::int64_t fanout, int ranks) {
  std::vector<std::int64_t> first_position(rows.size(), 0);
  std::vector<keyed_entry> all;
  for (int r = 0; r < ranks; ++r) {
    const auto first = static_cast<vertex_t>(a.cols * r / ranks);
    const auto last = static_cast<vertex_t>(a.cols * (r + 1) / ranks);
    const auto part = columns_in_range(exec, a.view(), first, last);
    const auto candidates =
        smallest_keyed_entries(exec, part.view(), rows, first_position, streams, fanout);
    all.insert(all.end(), candidates.rbegin(), candidates.rend());  // any order
    for (std::size_t i = 0; i < rows.size(); ++i) first_position[i] += part.view().degree(rows[i]);
  }
  return take_smallest_keys(exec, all, static_cast<std::int64_t>(rows.size()), a.cols, fanout);
}

TEST(SplitDraws, MergedCandidatesOfAnySplitAreTheWholeRowsDraw) {
  std::mt19937_64 gen(5);
  for (int round = 0; round < 6; ++round) {
    const auto a = testing::random_csr(
        gen, {.rows = 30, .cols = 400, .mean_degree = 20 + 30 * round, .empty_rows = 0.1});
    std::vector<vertex_t> rows(60);
    std::vector<std::uint32_t> minibatch(rows.size());
    for (std::size_t i = 0; i < rows.size(); ++i) {
      rows[i] = static_cast<vertex_t>(i % 30);
      minibatch[i] = static_cast<std::uint32_t>(i);
    }
    const std::vector<vertex_t> zero_keys(rows.size(), 0);
    const row_streams streams{.seed = 3,
                              .epoch = static_cast<std::uint32_t>(round),
                              .layer = 1,
                              .minibatch_of_row = minibatch,
                              .key_rows = zero_keys};
    for (const std::int64_t fanout : {1, 5, 40, 500}) {
      const auto whole = sample_rows(
          cpu_exec, a.view(), rows, streams,
          {.fanout = fanout, .mode = replacement::without, .weights = weighting::by_value});
      for (const int ranks : {1, 2, 3, 8})
        for (const auto* exec : {&cpu_exec, &reference_exec}) {
          SCOPED_TRACE(::testing::Message() << "round " << round << " fanout " << fanout << " on "
                                            << ranks << " ranks, " << backend_name(exec->kind()));
          expect_identical(whole, draw_split(*exec, a, rows, streams, fanout, ranks));
        }
    }
  }
}

TEST(SplitDraws, RefuseNonPositiveWeightsAndMissingPositions) {
  csr_matrix a;
  a.rows = 1;
  a.cols = 3;
  a.indptr = {0, 2};
  a.indices = {0, 2};
  a.values = {1.0f, 0.0f};
  const std::vector<vertex_t> rows{0};
  const std::vector<std::uint32_t> minibatch{0};
  const std::vector<std::int64_t> first{0};
  const row_streams streams{.minibatch_of_row = minibatch};
  EXPECT_THROW((void)smallest_keyed_entries(cpu_exec, a.view(), rows, first, streams, 1),
               option_error);
  a.values[1] = 2.0f;
  EXPECT_THROW((void)smallest_keyed_entries(cpu_exec, a.view(), rows, {}, streams, 1),
               option_error);
  EXPECT_THROW((void)smallest_keyed_entries(cpu_exec, a.view(), rows, first, streams, 0),
               option_error);
  const std::vector<keyed_entry> outside{{.row = 1, .column = 0}};
  EXPECT_THROW((void)take_smallest_keys(cpu_exec, outside, 1, 3, 1), option_error);
}

TEST(ColumnsInRange, KeepsTheEntriesOfTheRangeInOrderOnBothBackends) {
  std::mt19937_64 gen(8);
  const auto a = testing::random_csr(gen, {.rows = 80, .cols = 120, .mean_degree = 15});
  const auto kept = columns_in_range(reference_exec, a.view(), 30, 77);
  expect_identical(kept, columns_in_range(cpu_exec, a.view(), 30, 77));
  EXPECT_EQ(kept.rows, a.rows);
  EXPECT_EQ(kept.cols, a.cols);
  for (std::int64_t r = 0; r < a.rows; ++r) {
    std::vector<vertex_t> expected;
    std::vector<float> values;
    for (auto e = a.indptr[r]; e < a.indptr[r + 1]; ++e)
      if (a.indices[e] >= 30 && a.indices[e] < 77) {
        expected.push_back(a.indices[e]);
        values.push_back(a.values[e]);
      }
    const auto row = kept.view().row(r);
    const auto row_values = kept.view().row_values(r);
    EXPECT_EQ(std::vector<vertex_t>(row.begin(), row.end()), expected) << "row " << r;
    EXPECT_EQ(std::vector<float>(row_values.begin(), row_values.end()), values) << "row " << r;
  }
  EXPECT_THROW((void)columns_in_range(cpu_exec, a.view(), 50, 40), option_error);
  EXPECT_THROW((void)columns_in_range(cpu_exec, a.view(), 0, 121), option_error);
}

TEST(ColumnsAsVertices, UndoesRelabellingOnBothBackends) {
  std::mt19937_64 gen(9);
  std::uniform_int_distribution<vertex_t> vertex(0, 499);
  segmented_vertices destinations;
  csr_matrix sampled;
  sampled.rows = 0;
  sampled.cols = 500;
  for (int j = 0; j < 5; ++j) {
    std::vector<vertex_t> d(static_cast<std::size_t>(3 + j));
    std::iota(d.begin(), d.end(), static_cast<vertex_t>(100 * j));
    destinations.push_segment(d);
    for (std::size_t r = 0; r < d.size(); ++r) {
      for (int k = 0; k < 4; ++k) sampled.indices.push_back(vertex(gen));
      sampled.indptr.push_back(static_cast<edge_t>(sampled.indices.size()));
      ++sampled.rows;
    }
  }
  const auto relabelled = relabel_by_segment(cpu_exec, destinations, sampled.view());
  for (const auto* exec : {&cpu_exec, &reference_exec}) {
    const auto back = columns_as_vertices(*exec, relabelled.blocks.view(), destinations.offsets,
                                          relabelled.sources, 500);
    EXPECT_EQ(back.indices, sampled.indices) << backend_name(exec->kind());
    EXPECT_EQ(back.cols, 500);
  }
  // The same blocks behind a view whose indptr starts above 0 (entries are
  // indexed from indptr[0]).
  const auto& blocks = relabelled.blocks;
  std::vector<edge_t> shifted(blocks.indptr.begin(), blocks.indptr.end());
  for (auto& e : shifted) e += 3;
  std::vector<vertex_t> padded(3, -7);
  padded.insert(padded.end(), blocks.indices.begin(), blocks.indices.end());
  const csr_view shifted_view{
      blocks.rows, blocks.cols, shifted, std::span<const vertex_t>(padded).subspan(3), {}};
  for (const auto* exec : {&cpu_exec, &reference_exec})
    EXPECT_EQ(
        columns_as_vertices(*exec, shifted_view, destinations.offsets, relabelled.sources, 500)
            .indices,
        sampled.indices)
        << backend_name(exec->kind());
}

}  // namespace
}  // namespace bulkgnn::kernels
