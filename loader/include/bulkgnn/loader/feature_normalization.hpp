#pragma once

#include "bulkgnn/core/dense.hpp"
#include "bulkgnn/core/types.hpp"

#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace bulkgnn::loader {

// How feature rows are transformed as they are read for training and
// evaluation (the dataset itself is never rewritten).
enum class feature_normalization { none, row };

// "none" or "row"; option_error naming --normalize-features otherwise.
[[nodiscard]] feature_normalization parse_feature_normalization(const std::string& name);
[[nodiscard]] std::string_view feature_normalization_name(feature_normalization kind);

// PyG's NormalizeFeatures, as torch_geometric/transforms/normalize_features.py
// does it (for a non-empty x):
//
//   x = x - x.min()                                    # one shift, whole matrix
//   x = x / x.sum(dim=-1, keepdim=True).clamp(min=1)   # per row
//
// so rows of non-negative values sum to 1, rows of zeros stay zero, and a row
// whose shifted sum is below 1 is left unscaled (the clamp). Older PyG
// releases skip the shift, which is the same for features whose minimum is 0
// (bag-of-words counts), not for signed ones (SVD components). Held as the
// shift and one divisor per row, computed once from the features (never
// copied), and applied to rows as they are read: a normalised row is
// (x - shift) / divisor in float, bit for bit the same wherever it is read
// (loader gather, remote fetch, full-graph evaluation) and for any thread
// count. Each row sum is taken in double, then rounded to float, so a divisor
// can differ from PyG's float32 sum in its last bit.
class row_normalizer {
 public:
  explicit row_normalizer(dense_view<const float> features);
  // From factors computed apart (a partitioned dataset's parts): `shift` the
  // minimum over every row, divisors[v] vertex v's row_divisors.
  row_normalizer(float shift, std::vector<float> divisors);

  // The pieces of the constructor, for rows held in parts: the minimum of
  // `rows` (+infinity when empty; exact, so parts combine in any order) and
  // the divisor of each row given the whole matrix's shift.
  [[nodiscard]] static float minimum(dense_view<const float> rows);
  [[nodiscard]] static std::vector<float> row_divisors(dense_view<const float> rows, float shift);

  [[nodiscard]] float shift() const { return shift_; }
  [[nodiscard]] std::span<const float> divisors() const { return divisors_; }

  // Row i of `rows` holds the features of vertex vertices[i]; normalises
  // them in place.
  void apply(std::span<const vertex_t> vertices, dense_view<float> rows) const;
  // Row v of `features` holds vertex v's (a copy of the whole matrix).
  void apply_to_all(dense_view<float> features) const;

 private:
  float shift_ = 0;
  std::vector<float> divisors_;  // one per vertex, at least 1
};

}  // namespace bulkgnn::loader
