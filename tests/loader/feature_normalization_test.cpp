#include "bulkgnn/loader/feature_normalization.hpp"

#include "bulkgnn/core/error.hpp"
#include "bulkgnn/core/parallel.hpp"
#include "bulkgnn/loader/loader.hpp"
#include "test_graphs.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <numeric>

namespace bulkgnn::loader {
namespace {

// Rows of mixed sign (a whole-matrix minimum of -3), a row of zeros and a row
// whose shifted sum stays below 1 (PyG's clamp leaves it unscaled).
struct features_with_edge_cases {
  std::int64_t rows = 500;
  std::int64_t cols = 7;
  std::vector<float> values;

  features_with_edge_cases() : values(static_cast<std::size_t>(rows * cols)) {
    for (std::int64_t r = 0; r < rows; ++r)
      for (std::int64_t c = 0; c < cols; ++c)
        values[r * cols + c] = static_cast<float>((r * 31 + c * 17) % 23) / 4.0f - 2.5f;
    values[3] = -3.0f;
    std::fill_n(values.begin() + 10 * cols, cols, -3.0f);  // all zero once shifted
    std::fill_n(values.begin() + 11 * cols, cols, -3.0f);
    values[11 * cols] = -2.75f;  // shifted sum 0.25
  }
  [[nodiscard]] dense_view<const float> view() const { return {rows, cols, values}; }
};

// PyG's NormalizeFeatures written out plainly: x - x.min(), then each row
// divided by its sum clamped to at least 1.
std::vector<float> pyg_normalize(const features_with_edge_cases& f) {
  const float lowest = *std::min_element(f.values.begin(), f.values.end());
  std::vector<float> out(f.values.size());
  for (std::int64_t r = 0; r < f.rows; ++r) {
    double sum = 0;
    for (std::int64_t c = 0; c < f.cols; ++c) sum += f.values[r * f.cols + c] - lowest;
    const float divisor = std::max(static_cast<float>(sum), 1.0f);
    for (std::int64_t c = 0; c < f.cols; ++c)
      out[r * f.cols + c] = (f.values[r * f.cols + c] - lowest) / divisor;
  }
  return out;
}

TEST(row_normalizer, rows_sum_to_one_or_stay_zero_as_pyg_normalizes_them) {
  const features_with_edge_cases f;
  const row_normalizer normalizer(f.view());
  EXPECT_EQ(normalizer.shift(), -3.0f);
  auto all = f.values;
  normalizer.apply_to_all({f.rows, f.cols, all});
  EXPECT_EQ(all, pyg_normalize(f));
  for (std::int64_t r = 0; r < f.rows; ++r) {
    const auto row = std::span(all).subspan(r * f.cols, f.cols);
    const double sum = std::accumulate(row.begin(), row.end(), 0.0);
    EXPECT_TRUE(std::ranges::all_of(row, [](float x) { return x >= 0; })) << "row " << r;
    if (r == 10)
      EXPECT_EQ(sum, 0.0);
    else if (r == 11)
      EXPECT_NEAR(sum, 0.25, 1e-6);  // below 1 before scaling: left as is
    else
      EXPECT_NEAR(sum, 1.0, 1e-5) << "row " << r;
  }
}

// What the ranks of a partitioned dataset do: each part's minimum and
// divisors apart, the smallest minimum as the shift.
TEST(row_normalizer, factors_computed_by_parts_are_the_whole_matrixs) {
  const features_with_edge_cases f;
  const row_normalizer whole(f.view());
  const auto whole_divisors = whole.divisors();
  for (const std::int64_t split : {std::int64_t{0}, std::int64_t{7}, std::int64_t{250}}) {
    const dense_view<const float> first{split, f.cols, std::span(f.values).first(split * f.cols)};
    const dense_view<const float> second{f.rows - split, f.cols,
                                         std::span(f.values).subspan(split * f.cols)};
    const float shift = std::min(row_normalizer::minimum(first), row_normalizer::minimum(second));
    auto divisors = row_normalizer::row_divisors(first, shift);
    const auto rest = row_normalizer::row_divisors(second, shift);
    divisors.insert(divisors.end(), rest.begin(), rest.end());
    const row_normalizer by_parts(shift, divisors);
    EXPECT_EQ(by_parts.shift(), whole.shift());
    EXPECT_TRUE(std::equal(by_parts.divisors().begin(), by_parts.divisors().end(),
                           whole_divisors.begin(), whole_divisors.end()))
        << "split at " << split;
  }
}

TEST(row_normalizer, the_same_bits_for_any_thread_count) {
  const features_with_edge_cases f;
  std::vector<std::vector<float>> results;
  for (const int threads : {1, 2, 5}) {
    const thread_limit limit(threads);
    auto all = f.values;
    row_normalizer(f.view()).apply_to_all({f.rows, f.cols, all});
    results.push_back(std::move(all));
  }
  for (const auto& r : results)
    EXPECT_EQ(std::memcmp(r.data(), results[0].data(), r.size() * sizeof(float)), 0);
}

TEST(row_normalizer, loader_gather_equals_normalizing_the_matrix_then_gathering) {
  const features_with_edge_cases f;
  const auto graph = testing::random_graph(f.rows, 6);
  const std::vector<std::int32_t> labels(static_cast<std::size_t>(f.rows), 0);
  std::vector<vertex_t> train(static_cast<std::size_t>(f.rows / 2));
  std::iota(train.begin(), train.end(), vertex_t{0});
  const auto normalized = pyg_normalize(f);
  const row_normalizer normalizer(f.view());
  sampler::bulk_sampler sampler(graph.view(), {.kind = "sage", .fanouts = {4, 3}, .seed = 2});
  minibatch_loader loader(
      {.graph = graph.view(), .features = f.view(), .labels = labels, .normalizer = &normalizer},
      sampler, {.batch_size = 32, .bulk = 3});
  auto stream = loader.epoch(train, 0);
  std::int64_t checked = 0;
  while (auto mb = stream.next()) {
    ASSERT_EQ(mb->feature_columns, f.cols);
    for (std::size_t i = 0; i < mb->batch.input_nodes.size(); ++i) {
      const auto v = mb->batch.input_nodes[i];
      const auto got = mb->input_features().row(static_cast<std::int64_t>(i));
      const auto want = std::span(normalized).subspan(v * f.cols, f.cols);
      ASSERT_TRUE(std::ranges::equal(got, want)) << "vertex " << v;
      ++checked;
    }
  }
  EXPECT_GT(checked, f.rows / 2);
}

TEST(row_normalizer, apply_rejects_mismatched_rows_and_vertices) {
  const features_with_edge_cases f;
  const row_normalizer normalizer(f.view());
  std::vector<float> rows(static_cast<std::size_t>(2 * f.cols));
  const std::vector<vertex_t> one{0};
  const std::vector<vertex_t> beyond{0, static_cast<vertex_t>(f.rows)};
  EXPECT_THROW(normalizer.apply(one, {2, f.cols, rows}), option_error);
  EXPECT_THROW(normalizer.apply(beyond, {2, f.cols, rows}), option_error);
}

TEST(feature_normalization, names_round_trip_and_unknown_names_are_refused) {
  for (const auto kind : {feature_normalization::none, feature_normalization::row})
    EXPECT_EQ(parse_feature_normalization(std::string(feature_normalization_name(kind))), kind);
  EXPECT_THROW(std::ignore = parse_feature_normalization("column"), option_error);
}

}  // namespace
}  // namespace bulkgnn::loader
