#include "bulkgnn/kernels/rules/logistic.hpp"
#include "bulkgnn/kernels/rules/softmax.hpp"

#include <vector>

#include "common.hpp"
#include "kernels.hpp"

namespace bulkgnn::kernels::cpu {

// Rows in parallel, each row's loss kept apart and then summed in row order,
// as the reference sums them.
loss_result softmax_cross_entropy(dense_view<const float> logits,
                                  std::span<const std::int32_t> labels, dense_view<float> grad) {
  loss_result result;
  result.count = logits.rows;
  if (logits.rows == 0) return result;
  const float scale = 1.0f / static_cast<float>(logits.rows);
  std::vector<double> row_loss(static_cast<std::size_t>(logits.rows));
  std::vector<std::uint8_t> row_correct(row_loss.size());
  for_pieces(logits.rows, 4 * logits.cols, [&](std::int64_t begin, std::int64_t end) {
    for (std::int64_t r = begin; r < end; ++r) {
      const float* row = logits.row(r).data();
      row_loss[r] = rules::softmax_cross_entropy_row(
          row, logits.cols, labels[r], scale, grad.data.empty() ? nullptr : grad.row(r).data());
      row_correct[r] = rules::argmax(row, logits.cols) == labels[r] ? 1 : 0;
    }
  });
  double total = 0.0;
  for (std::size_t r = 0; r < row_loss.size(); ++r) {
    total += row_loss[r];
    result.correct += row_correct[r];
  }
  result.loss = total / static_cast<double>(logits.rows);
  return result;
}

// Rows in parallel, each weighted row loss kept apart and then summed in
// row order, as the reference sums them.
loss_result weighted_softmax_cross_entropy(dense_view<const float> logits,
                                           std::span<const std::int32_t> labels,
                                           std::span<const float> row_weights,
                                           dense_view<float> grad) {
  loss_result result;
  result.count = logits.rows;
  std::vector<double> row_loss(static_cast<std::size_t>(logits.rows));
  std::vector<std::uint8_t> row_correct(row_loss.size());
  for_pieces(logits.rows, 4 * logits.cols, [&](std::int64_t begin, std::int64_t end) {
    for (std::int64_t r = begin; r < end; ++r) {
      const float* row = logits.row(r).data();
      row_loss[r] = row_weights[r] * rules::softmax_cross_entropy_row(
                                         row, logits.cols, labels[r], row_weights[r],
                                         grad.data.empty() ? nullptr : grad.row(r).data());
      row_correct[r] = rules::argmax(row, logits.cols) == labels[r] ? 1 : 0;
    }
  });
  for (std::size_t r = 0; r < row_loss.size(); ++r) {
    result.loss += row_loss[r];
    result.correct += row_correct[r];
  }
  return result;
}

std::int64_t count_correct(dense_view<const float> logits, std::span<const std::int32_t> labels) {
  std::vector<std::uint8_t> row_correct(static_cast<std::size_t>(logits.rows));
  for_pieces(logits.rows, logits.cols, [&](std::int64_t begin, std::int64_t end) {
    for (std::int64_t r = begin; r < end; ++r)
      row_correct[r] = rules::argmax(logits.row(r).data(), logits.cols) == labels[r] ? 1 : 0;
  });
  std::int64_t correct = 0;
  for (const auto c : row_correct) correct += c;
  return correct;
}

// Entries in parallel, their losses then summed in order, as the reference sums them.
loss_result binary_cross_entropy(std::span<const float> scores, std::span<const float> labels,
                                 std::span<float> grad) {
  loss_result result;
  result.count = static_cast<std::int64_t>(scores.size());
  if (scores.empty()) return result;
  const float scale = 1.0f / static_cast<float>(scores.size());
  std::vector<double> losses(scores.size());
  for_pieces(result.count, 8, [&](std::int64_t begin, std::int64_t end) {
    for (auto i = static_cast<std::size_t>(begin); i < static_cast<std::size_t>(end); ++i)
      losses[i] =
          rules::logistic_loss(scores[i], labels[i], scale, grad.empty() ? nullptr : &grad[i]);
  });
  double total = 0.0;
  for (std::size_t i = 0; i < scores.size(); ++i) {
    total += losses[i];
    result.correct += (scores[i] > 0) == (labels[i] > 0.5f) ? 1 : 0;
  }
  result.loss = total / static_cast<double>(scores.size());
  return result;
}

}  // namespace bulkgnn::kernels::cpu
