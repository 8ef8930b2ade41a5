#include "bulkgnn/loader/feature_normalization.hpp"

#include "bulkgnn/core/error.hpp"
#include "bulkgnn/kernels/normalize.hpp"

#include <algorithm>
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

float row_normalizer::minimum(dense_view<const float> rows) {
  return kernels::minimum(executor{}, rows.data);
}

std::vector<float> row_normalizer::row_divisors(dense_view<const float> rows, float shift) {
  std::vector<double> sums(static_cast<std::size_t>(rows.rows));
  kernels::shifted_row_sums(executor{}, rows, shift, sums);
  std::vector<float> divisors(sums.size());
  std::transform(sums.begin(), sums.end(), divisors.begin(),
                 [](double sum) { return std::max(static_cast<float>(sum), 1.0f); });
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
  kernels::shift_and_divide_rows(executor{}, rows, shift_, divisors_, vertices);
}

void row_normalizer::apply_to_all(dense_view<float> features) const {
  BULKGNN_EXPECTS(static_cast<std::size_t>(features.rows) == divisors_.size(),
                  "row_normalizer::apply_to_all: {} rows, the normalizer has {}", features.rows,
                  divisors_.size());
  kernels::shift_and_divide_rows(executor{}, features, shift_, divisors_);
}

}  // namespace bulkgnn::loader
