#include "bulkgnn/trainer/link_metrics.hpp"

#include "bulkgnn/core/error.hpp"

#include <algorithm>
#include <functional>
#include <vector>

namespace bulkgnn::trainer {

double hits_at_k(std::span<const float> positive, std::span<const float> negative, std::int64_t k) {
  BULKGNN_EXPECTS(k >= 1, "hits_at_k: K = {} must be at least 1", k);
  if (static_cast<std::int64_t>(negative.size()) < k) return 1.0;
  if (positive.empty()) return 0.0;
  std::vector<float> sorted(negative.begin(), negative.end());
  std::nth_element(sorted.begin(), sorted.begin() + (k - 1), sorted.end(), std::greater<>());
  const float kth = sorted[static_cast<std::size_t>(k - 1)];
  const auto hits =
      std::count_if(positive.begin(), positive.end(), [&](float s) { return s > kth; });
  return static_cast<double>(hits) / static_cast<double>(positive.size());
}

double mean_reciprocal_rank(std::span<const float> positive, std::span<const float> negative) {
  if (positive.empty()) return 0.0;
  BULKGNN_EXPECTS(negative.size() % positive.size() == 0,
                  "mean_reciprocal_rank: {} negatives are not a whole number for each of {} "
                  "positives",
                  negative.size(), positive.size());
  const auto per = negative.size() / positive.size();
  double sum = 0;
  for (std::size_t i = 0; i < positive.size(); ++i) {
    std::int64_t above = 0;
    std::int64_t at_least = 0;
    for (const float s : negative.subspan(i * per, per)) {
      above += s > positive[i] ? 1 : 0;
      at_least += s >= positive[i] ? 1 : 0;
    }
    sum += 1.0 / (0.5 * static_cast<double>(above + at_least) + 1.0);
  }
  return sum / static_cast<double>(positive.size());
}

}  // namespace bulkgnn::trainer
