#include "bulkgnn/kernels/rules/logistic.hpp"
#include "bulkgnn/kernels/rules/softmax.hpp"

#include "kernels.hpp"

namespace bulkgnn::kernels::reference {

loss_result softmax_cross_entropy(dense_view<const float> logits,
                                  std::span<const std::int32_t> labels, dense_view<float> grad) {
  loss_result result;
  result.count = logits.rows;
  if (logits.rows == 0) return result;
  const float scale = 1.0f / static_cast<float>(logits.rows);
  double total = 0.0;
  for (std::int64_t r = 0; r < logits.rows; ++r) {
    const float* row = logits.row(r).data();
    total += rules::softmax_cross_entropy_row(row, logits.cols, labels[r], scale,
                                              grad.data.empty() ? nullptr : grad.row(r).data());
    result.correct += rules::argmax(row, logits.cols) == labels[r] ? 1 : 0;
  }
  result.loss = total / static_cast<double>(logits.rows);
  return result;
}

loss_result weighted_softmax_cross_entropy(dense_view<const float> logits,
                                           std::span<const std::int32_t> labels,
                                           std::span<const float> row_weights,
                                           dense_view<float> grad) {
  loss_result result;
  result.count = logits.rows;
  for (std::int64_t r = 0; r < logits.rows; ++r) {
    const float* row = logits.row(r).data();
    result.loss += row_weights[r] * rules::softmax_cross_entropy_row(
                                        row, logits.cols, labels[r], row_weights[r],
                                        grad.data.empty() ? nullptr : grad.row(r).data());
    result.correct += rules::argmax(row, logits.cols) == labels[r] ? 1 : 0;
  }
  return result;
}

std::int64_t count_correct(dense_view<const float> logits, std::span<const std::int32_t> labels) {
  std::int64_t correct = 0;
  for (std::int64_t r = 0; r < logits.rows; ++r)
    correct += rules::argmax(logits.row(r).data(), logits.cols) == labels[r] ? 1 : 0;
  return correct;
}

loss_result binary_cross_entropy(std::span<const float> scores, std::span<const float> labels,
                                 std::span<float> grad) {
  loss_result result;
  result.count = static_cast<std::int64_t>(scores.size());
  if (scores.empty()) return result;
  const float scale = 1.0f / static_cast<float>(scores.size());
  double total = 0.0;
  for (std::size_t i = 0; i < scores.size(); ++i) {
    total += rules::logistic_loss(scores[i], labels[i], scale, grad.empty() ? nullptr : &grad[i]);
    result.correct += (scores[i] > 0) == (labels[i] > 0.5f) ? 1 : 0;
  }
  result.loss = total / static_cast<double>(scores.size());
  return result;
}

}  // namespace bulkgnn::kernels::reference
