#include "bulkgnn/loader/feature_cache.hpp"

#include "bulkgnn/core/error.hpp"

#include <gtest/gtest.h>

#include <bit>
#include <numeric>
#include <vector>

namespace bulkgnn::loader {
namespace {

csr_matrix graph_with_degrees(const std::vector<edge_t>& degrees) {
  csr_matrix g;
  g.rows = static_cast<std::int64_t>(degrees.size());
  g.cols = g.rows;
  g.indptr.assign(degrees.size() + 1, 0);
  std::inclusive_scan(degrees.begin(), degrees.end(), g.indptr.begin() + 1);
  g.indices.assign(static_cast<std::size_t>(g.indptr.back()), 0);
  return g;
}

TEST(FeatureCache, HottestByDegreeBreaksTiesTowardsTheLowerId) {
  const auto g = graph_with_degrees({1, 5, 0, 5, 2, 9});
  EXPECT_EQ(hottest_by_degree(g.view(), 3), (std::vector<vertex_t>{5, 1, 3}));
  EXPECT_EQ(hottest_by_degree(g.view(), 0), std::vector<vertex_t>{});
  EXPECT_EQ(hottest_by_degree(g.view(), 100).size(), 6u);
}

TEST(FeatureCache, HottestByCountNeverTakesAVertexNobodyAskedFor) {
  const std::vector<std::uint64_t> counts{0, 3, 3, 0, 7};
  EXPECT_EQ(hottest_by_count(counts, 2), (std::vector<vertex_t>{4, 1}));
  EXPECT_EQ(hottest_by_count(counts, 10), (std::vector<vertex_t>{4, 1, 2}));
}

TEST(FeatureCache, PolicyNamesAreParsedAndOthersRefusedNamingTheOption) {
  EXPECT_EQ(parse_cache_policy("degree", "--cache-policy"), cache_policy::degree);
  EXPECT_EQ(parse_cache_policy("frequency", "--cache-policy"), cache_policy::frequency);
  try {
    (void)parse_cache_policy("lru", "--cache-policy");
    FAIL() << "lru was accepted";
  } catch (const option_error& e) {
    EXPECT_NE(std::string(e.what()).find("--cache-policy"), std::string::npos) << e.what();
  }
}

// With the cache in host memory the cpu back end runs the whole path: the
// gathered rows are the table's, and the tally counts hits and bytes.
TEST(FeatureCache, GathersTheTablesRowsAndTalliesHitsAndBytes) {
  const std::int64_t n = 50;
  const std::int64_t cols = 3;
  std::vector<float> x(static_cast<std::size_t>(n * cols));
  std::iota(x.begin(), x.end(), 0.5f);
  const dense_view<const float> table{n, cols, x};
  const std::vector<vertex_t> hot{4, 40};
  const placed_features features(table, host_memory(), hot, host_memory());
  EXPECT_EQ(features.cached_vertices(), 2);
  EXPECT_EQ(features.view().all.data.data(), x.data());  // host table: not copied

  const std::vector<vertex_t> rows{4, 5, 40, 40, 0};
  std::vector<float> out(rows.size() * cols, -1.0f);
  gather_tally tally;
  tally.gather(executor(backend::cpu), features, rows,
               {static_cast<std::int64_t>(rows.size()), cols, std::span<float>(out)});
  for (std::size_t i = 0; i < rows.size(); ++i)
    for (std::int64_t j = 0; j < cols; ++j)
      EXPECT_EQ(std::bit_cast<std::uint32_t>(out[i * cols + j]),
                std::bit_cast<std::uint32_t>(x[rows[i] * cols + j]));
  EXPECT_EQ(tally.rows, 5);
  EXPECT_EQ(tally.cache_hits, 3);
  EXPECT_DOUBLE_EQ(tally.hit_rate(), 0.6);
  EXPECT_EQ(tally.bytes_from_cache(), 3 * cols * 4);
  EXPECT_EQ(tally.bytes_from_table(), 2 * cols * 4);
}

TEST(FeatureCache, RefusesARepeatedOrOutOfRangeHotVertex) {
  const std::vector<float> x(8, 1.0f);
  const dense_view<const float> table{4, 2, x};
  EXPECT_THROW(placed_features(table, host_memory(), std::vector<vertex_t>{1, 1}, host_memory()),
               option_error);
  EXPECT_THROW(placed_features(table, host_memory(), std::vector<vertex_t>{4}, host_memory()),
               option_error);
}

}  // namespace
}  // namespace bulkgnn::loader
