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

namespace {

// OGB's rank of positive i among its own negatives, ties splitting the
// difference: 1 + (#negatives above + #negatives at least as high) / 2.
template <class Use>
void for_each_rank(std::span<const float> positive, std::span<const float> negative,
                   const char* function, const Use& use) {
  BULKGNN_EXPECTS(negative.size() % positive.size() == 0,
                  "{}: {} negatives are not a whole number for each of {} positives", function,
                  negative.size(), positive.size());
  const auto per = negative.size() / positive.size();
  for (std::size_t i = 0; i < positive.size(); ++i) {
    std::int64_t above = 0;
    std::int64_t at_least = 0;
    for (const float s : negative.subspan(i * per, per)) {
      above += s > positive[i] ? 1 : 0;
      at_least += s >= positive[i] ? 1 : 0;
    }
    use(0.5 * static_cast<double>(above + at_least) + 1.0);
  }
}

}  // namespace

double mean_reciprocal_rank(std::span<const float> positive, std::span<const float> negative) {
  if (positive.empty()) return 0.0;
  double sum = 0;
  for_each_rank(positive, negative, "mean_reciprocal_rank",
                [&](double rank) { sum += 1.0 / rank; });
  return sum / static_cast<double>(positive.size());
}

double hits_at_k_of_own_negatives(std::span<const float> positive, std::span<const float> negative,
                                  std::int64_t k) {
  if (positive.empty()) return 0.0;
  std::int64_t hits = 0;
  for_each_rank(positive, negative, "hits_at_k_of_own_negatives",
                [&](double rank) { hits += rank <= static_cast<double>(k) ? 1 : 0; });
  return static_cast<double>(hits) / static_cast<double>(positive.size());
}

}  // namespace bulkgnn::trainer
