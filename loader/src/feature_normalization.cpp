#include "bulkgnn/loader/feature_normalization.hpp"

#include "bulkgnn/core/error.hpp"

#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>
#include <tbb/parallel_reduce.h>

#include <algorithm>
#include <limits>
#include <utility>

namespace bulkgnn::loader {

feature_normalization parse_feature_normalization(const std::string& name) {
  if (name == "none") return feature_normalization::none;
  if (name == "row") return feature_normalization::row;
  throw option_error(
      "parse_feature_normalization: train_options.normalize_features must be none or row; got '" +
      name + "'");
}

std::string_view feature_normalization_name(feature_normalization kind) {
  return kind == feature_normalization::row ? "row" : "none";
}

// The minimum is exact in any order, so the parallel reduction is
// deterministic.
float row_normalizer::minimum(dense_view<const float> rows) {
  const std::span<const float> values = rows.data;
  return tbb::parallel_reduce(
      tbb::blocked_range<std::size_t>(0, values.size()), std::numeric_limits<float>::infinity(),
      [&](const tbb::blocked_range<std::size_t>& r, float lowest) {
        for (std::size_t i = r.begin(); i < r.end(); ++i) lowest = std::min(lowest, values[i]);
        return lowest;
      },
      [](float a, float b) { return std::min(a, b); });
}

std::vector<float> row_normalizer::row_divisors(dense_view<const float> rows, float shift) {
  std::vector<float> divisors(static_cast<std::size_t>(rows.rows), 1.0f);
  // Each row is summed by one thread in column order: deterministic.
  tbb::parallel_for(std::int64_t{0}, rows.rows, [&](std::int64_t r) {
    double sum = 0;
    for (const float x : rows.row(r)) sum += static_cast<double>(x - shift);
    divisors[static_cast<std::size_t>(r)] = std::max(static_cast<float>(sum), 1.0f);
  });
  return divisors;
}

row_normalizer::row_normalizer(dense_view<const float> features)
    : shift_(features.data.empty() ? 0.0f : minimum(features)),
      divisors_(row_divisors(features, shift_)) {}

row_normalizer::row_normalizer(float shift, std::vector<float> divisors)
    : shift_(shift), divisors_(std::move(divisors)) {}

void row_normalizer::apply(std::span<const vertex_t> vertices, dense_view<float> rows) const {
  BULKGNN_EXPECTS(static_cast<std::int64_t>(vertices.size()) == rows.rows,
                  "row_normalizer::apply: {} vertices for {} rows", vertices.size(), rows.rows);
  tbb::parallel_for(std::int64_t{0}, rows.rows, [&](std::int64_t i) {
    const auto v = vertices[static_cast<std::size_t>(i)];
    BULKGNN_EXPECTS(v >= 0 && static_cast<std::size_t>(v) < divisors_.size(),
                    "row_normalizer::apply: vertex {} of {}", v, divisors_.size());
    normalize(rows.row(i), divisors_[static_cast<std::size_t>(v)]);
  });
}

void row_normalizer::apply_to_all(dense_view<float> features) const {
  BULKGNN_EXPECTS(static_cast<std::size_t>(features.rows) == divisors_.size(),
                  "row_normalizer::apply_to_all: {} rows, the normalizer has {}", features.rows,
                  divisors_.size());
  tbb::parallel_for(std::int64_t{0}, features.rows, [&](std::int64_t v) {
    normalize(features.row(v), divisors_[static_cast<std::size_t>(v)]);
  });
}

void row_normalizer::normalize(std::span<float> row, float divisor) const {
  for (float& x : row) x = (x - shift_) / divisor;
}

}  // namespace bulkgnn::loader
