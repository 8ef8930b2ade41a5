#include "bulkgnn/trainer/loss.hpp"

#include "bulkgnn/core/error.hpp"

#include <algorithm>
#include <cmath>

namespace bulkgnn::trainer {

namespace {

void check_labels(dense_view<const float> logits, std::span<const std::int32_t> labels,
                  std::string_view function) {
  BULKGNN_EXPECTS(static_cast<std::int64_t>(labels.size()) == logits.rows,
                  "{}: {} labels for {} rows of logits", function, labels.size(), logits.rows);
  for (std::size_t r = 0; r < labels.size(); ++r)
    if (labels[r] < 0 || labels[r] >= logits.cols)
      throw error(fmt::format("{}: row {} has label {}, outside [0, {})", function, r, labels[r],
                              logits.cols));
}

std::int64_t argmax(std::span<const float> row) {
  return std::max_element(row.begin(), row.end()) - row.begin();
}

// Cross-entropy of one row; writes softmax − onehot scaled by `scale` into
// grad when it is not empty.
double row_loss(std::span<const float> logits, std::int32_t label, float scale,
                std::span<float> grad) {
  const float max = *std::max_element(logits.begin(), logits.end());
  double sum = 0.0;
  for (const float z : logits) sum += std::exp(static_cast<double>(z - max));
  const double log_sum = std::log(sum);
  if (!grad.empty()) {
    for (std::size_t j = 0; j < logits.size(); ++j)
      grad[j] =
          static_cast<float>(std::exp(static_cast<double>(logits[j] - max) - log_sum)) * scale;
    grad[label] -= scale;
  }
  return log_sum - static_cast<double>(logits[label] - max);
}

}  // namespace

loss_result softmax_cross_entropy(dense_view<const float> logits,
                                  std::span<const std::int32_t> labels, dense_view<float> grad) {
  check_labels(logits, labels, "softmax_cross_entropy");
  const bool with_grad = !grad.data.empty();
  BULKGNN_EXPECTS(!with_grad || (grad.rows == logits.rows && grad.cols == logits.cols),
                  "softmax_cross_entropy: gradient is {}x{} but the logits are {}x{}", grad.rows,
                  grad.cols, logits.rows, logits.cols);
  loss_result result;
  result.count = logits.rows;
  if (logits.rows == 0) return result;
  const float scale = 1.0f / static_cast<float>(logits.rows);
  double total = 0.0;
  for (std::int64_t r = 0; r < logits.rows; ++r) {
    const auto row = logits.row(r);
    total += row_loss(row, labels[r], scale, with_grad ? grad.row(r) : std::span<float>{});
    result.correct += argmax(row) == labels[r] ? 1 : 0;
  }
  result.loss = total / static_cast<double>(logits.rows);
  return result;
}

std::int64_t count_correct(dense_view<const float> logits, std::span<const std::int32_t> labels) {
  check_labels(logits, labels, "count_correct");
  std::int64_t correct = 0;
  for (std::int64_t r = 0; r < logits.rows; ++r)
    correct += argmax(logits.row(r)) == labels[r] ? 1 : 0;
  return correct;
}

}  // namespace bulkgnn::trainer
