#include "bulkgnn/kernels/frontier.hpp"

#include "bulkgnn/core/error.hpp"
#include "test_support.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <numeric>
#include <random>
#include <set>
#include <tuple>
#include <vector>

// The sampler's frontier bookkeeping: cpu equals the reference on random
// inputs, and each operation does what its definition says.
namespace bulkgnn::kernels {
namespace {

using testing::cpu_exec;
using testing::expect_identical;
using testing::reference_exec;

std::vector<vertex_t> random_vertices(std::mt19937_64& gen, std::size_t count, vertex_t below) {
  std::uniform_int_distribution<vertex_t> vertex(0, below - 1);
  std::vector<vertex_t> out(count);
  for (auto& v : out) v = vertex(gen);
  return out;
}

// Segments of random sizes (at least 1) holding distinct vertices each.
segmented_vertices random_frontier(std::mt19937_64& gen, int segments, vertex_t below) {
  segmented_vertices f;
  std::uniform_int_distribution<int> size(1, 40);
  for (int j = 0; j < segments; ++j) {
    auto v = random_vertices(gen, static_cast<std::size_t>(size(gen)), below);
    std::sort(v.begin(), v.end());
    v.erase(std::unique(v.begin(), v.end()), v.end());
    std::shuffle(v.begin(), v.end(), gen);
    f.push_segment(v);
  }
  return f;
}

TEST(Frontier, SortedDistinctIsTheSetInOrder) {
  std::mt19937_64 gen(1);
  for (const std::size_t n : {0u, 1u, 100u, 50000u}) {
    const auto v = random_vertices(gen, n, 1000);
    const std::set<vertex_t> set(v.begin(), v.end());
    const std::vector<vertex_t> expected(set.begin(), set.end());
    EXPECT_EQ(sorted_distinct(reference_exec, v), expected);
    EXPECT_EQ(sorted_distinct(cpu_exec, v), expected);
  }
}

TEST(Frontier, PositionsInSortedFindEachValue) {
  std::mt19937_64 gen(2);
  const auto v = random_vertices(gen, 20000, 3000);
  const auto sorted = sorted_distinct(cpu_exec, v);
  const auto positions = positions_in_sorted(cpu_exec, v, sorted);
  EXPECT_EQ(positions, positions_in_sorted(reference_exec, v, sorted));
  for (std::size_t i = 0; i < v.size(); ++i) EXPECT_EQ(sorted[positions[i]], v[i]);
  const std::vector<vertex_t> missing{sorted.back() + 1};
  EXPECT_THROW((void)positions_in_sorted(reference_exec, missing, sorted), option_error);
  const std::vector<vertex_t> unsorted{3, 1};
  EXPECT_THROW((void)positions_in_sorted(cpu_exec, unsorted, unsorted), option_error);
}

TEST(Frontier, RepeatPerSegmentGivesEachElementItsSegmentsValue) {
  const std::vector<std::int64_t> offsets{0, 3, 3, 7};
  const std::vector<std::uint32_t> values{9, 4, 7};
  const std::vector<std::uint32_t> expected{9, 9, 9, 7, 7, 7, 7};
  EXPECT_EQ(repeat_per_segment(reference_exec, offsets, values), expected);
  EXPECT_EQ(repeat_per_segment(cpu_exec, offsets, values), expected);
  EXPECT_THROW((void)repeat_per_segment(cpu_exec, offsets, std::vector<std::uint32_t>{1}),
               option_error);
}

TEST(Frontier, SelectionWeighsEachVertexByItsSquaredNormalisedDegree) {
  std::mt19937_64 gen(3);
  const vertex_t n = 500;
  const auto graph = testing::random_csr(gen, {.rows = n, .cols = n, .mean_degree = 6});
  const auto frontier = random_frontier(gen, 30, n);
  const auto distinct = sorted_distinct(cpu_exec, frontier.vertices);
  // Rows of `distinct` stored in reverse order, as fetched rows may be.
  csr_matrix fetched;
  fetched.cols = n;
  std::vector<vertex_t> row_of(distinct.size());
  for (std::size_t k = distinct.size(); k-- > 0;) {
    row_of[k] = static_cast<vertex_t>(fetched.rows++);
    const auto row = graph.view().row(distinct[k]);
    fetched.indices.insert(fetched.indices.end(), row.begin(), row.end());
    fetched.indptr.push_back(static_cast<edge_t>(fetched.indices.size()));
  }
  const auto q = frontier_selection(cpu_exec, frontier, distinct, fetched.view(), row_of, n);
  expect_identical(
      frontier_selection(reference_exec, frontier, distinct, fetched.view(), row_of, n), q);
  ASSERT_EQ(q.rows, frontier.segments());
  for (std::int64_t j = 0; j < q.rows; ++j) {
    auto members = frontier.segment(j);
    std::vector<vertex_t> sorted(members.begin(), members.end());
    std::sort(sorted.begin(), sorted.end());
    const auto columns = q.view().row(j);
    ASSERT_TRUE(std::equal(columns.begin(), columns.end(), sorted.begin(), sorted.end()));
    for (std::size_t e = 0; e < columns.size(); ++e) {
      const double d = static_cast<double>(graph.view().degree(columns[e])) + 1.0;
      EXPECT_EQ(q.view().row_values(j)[e], static_cast<float>(1.0 / (d * d)));
    }
  }
  // A rank holding only some columns of the rows passes their degrees.
  std::vector<edge_t> degrees;
  for (const vertex_t v : distinct) degrees.push_back(graph.view().degree(v));
  expect_identical(frontier_selection(cpu_exec, frontier, distinct, degrees, n), q);
  expect_identical(frontier_selection(reference_exec, frontier, distinct, degrees, n), q);
  degrees.pop_back();
  EXPECT_THROW(std::ignore = frontier_selection(cpu_exec, frontier, distinct, degrees, n),
               option_error);
}

TEST(Frontier, RenameColumnsMapsEveryKeyAndKeepsValues) {
  std::mt19937_64 gen(4);
  const auto m = testing::random_csr(gen, {.rows = 300, .cols = 1000, .mean_degree = 8});
  const auto keys = sorted_distinct(cpu_exec, m.indices);
  std::vector<vertex_t> mapped(keys.size());
  std::iota(mapped.begin(), mapped.end(), 0);
  std::shuffle(mapped.begin(), mapped.end(), gen);
  const auto cols = static_cast<std::int64_t>(keys.size());
  const auto renamed = rename_columns(cpu_exec, m.view(), keys, mapped, cols);
  expect_identical(rename_columns(reference_exec, m.view(), keys, mapped, cols), renamed);
  EXPECT_EQ(renamed.cols, cols);
  EXPECT_EQ(renamed.indptr, m.indptr);
  EXPECT_EQ(testing::bits(renamed.values), testing::bits(m.values));
  for (std::size_t e = 0; e < m.indices.size(); ++e) {
    const auto k = std::lower_bound(keys.begin(), keys.end(), m.indices[e]) - keys.begin();
    EXPECT_EQ(renamed.indices[e], mapped[static_cast<std::size_t>(k)]);
  }
}

TEST(Frontier, WithSelfLoopsAddsTheLoopLastOnlyWhereMissing) {
  std::mt19937_64 gen(5);
  const vertex_t n = 400;
  const auto graph = testing::random_csr(gen, {.rows = n, .cols = n, .mean_degree = 5});
  const auto vertices = sorted_distinct(cpu_exec, random_vertices(gen, 300, n));
  std::vector<vertex_t> row_of(vertices.begin(), vertices.end());  // rows of the whole graph
  const auto looped = with_self_loops(cpu_exec, graph.view(), row_of, vertices);
  expect_identical(with_self_loops(reference_exec, graph.view(), row_of, vertices), looped);
  for (std::size_t i = 0; i < vertices.size(); ++i) {
    const auto original = graph.view().row(vertices[i]);
    const auto row = looped.view().row(static_cast<std::int64_t>(i));
    const bool had = std::find(original.begin(), original.end(), vertices[i]) != original.end();
    ASSERT_EQ(row.size(), original.size() + (had ? 0 : 1));
    EXPECT_TRUE(std::equal(original.begin(), original.end(), row.begin()));
    if (!had) {
      EXPECT_EQ(row.back(), vertices[i]);
    }
  }
}

TEST(Frontier, SpreadPutsEachSegmentsRowFirst) {
  csr_matrix per_segment;
  per_segment.rows = 3;
  per_segment.cols = 10;
  per_segment.indptr = {0, 2, 2, 5};
  per_segment.indices = {1, 7, 0, 3, 9};
  const std::vector<std::int64_t> offsets{0, 2, 3, 6};
  const auto spread = spread_to_segment_starts(cpu_exec, per_segment.view(), offsets);
  expect_identical(spread_to_segment_starts(reference_exec, per_segment.view(), offsets), spread);
  EXPECT_EQ(spread.rows, 6);
  EXPECT_EQ(spread.indptr, (std::vector<edge_t>{0, 2, 2, 2, 5, 5, 5}));
  EXPECT_EQ(spread.indices, per_segment.indices);
  const std::vector<std::int64_t> with_empty{0, 2, 2, 6};
  EXPECT_THROW((void)spread_to_segment_starts(cpu_exec, per_segment.view(), with_empty),
               option_error);
}

TEST(Frontier, InvertProbabilitiesRefusesWhatIsNotAProbability) {
  std::vector<float> p{0.5f, 0.25f, 1e-30f, 1.0f};
  auto q = p;
  invert_probabilities(cpu_exec, p);
  invert_probabilities(reference_exec, q);
  EXPECT_EQ(testing::bits(p), testing::bits(q));
  EXPECT_EQ(p[0], 2.0f);
  for (const float bad : {0.0f, -1.0f, std::numeric_limits<float>::quiet_NaN()}) {
    std::vector<float> v{1.0f, bad};
    EXPECT_THROW(invert_probabilities(cpu_exec, v), option_error);
  }
}

}  // namespace
}  // namespace bulkgnn::kernels
