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

}  // namespace bulkgnn::kernels::cpu
