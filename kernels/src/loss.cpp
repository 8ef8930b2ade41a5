#include "bulkgnn/kernels/loss.hpp"

#include "../cpu/kernels.hpp"
#include "../cuda/kernels.hpp"
#include "../reference/kernels.hpp"
#include "front_door.hpp"

#include <cmath>

namespace bulkgnn::kernels {
namespace {

void check_labels(const executor& exec, dense_view<const float> logits,
                  std::span<const std::int32_t> labels, std::string_view function) {
  detail::check_dense(exec, logits, function, "logits");
  BULKGNN_EXPECTS(static_cast<std::int64_t>(labels.size()) == logits.rows,
                  "{}: {} labels for {} rows of logits", function, labels.size(), logits.rows);
  // Labels the host cannot read (device memory) are checked by the kernel.
  if (!detail::span_reachable(exec, labels.data(), function, "labels")) return;
  for (std::size_t r = 0; r < labels.size(); ++r)
    if (labels[r] < 0 || labels[r] >= logits.cols)
      throw error(fmt::format("{}: row {} has label {}, outside [0, {})", function, r, labels[r],
                              logits.cols));
}

}  // namespace

loss_result softmax_cross_entropy(const executor& exec, dense_view<const float> logits,
                                  std::span<const std::int32_t> labels, dense_view<float> grad) {
  check_labels(exec, logits, labels, "softmax_cross_entropy");
  if (!grad.data.empty()) {
    detail::check_dense(exec, grad, "softmax_cross_entropy", "grad");
    BULKGNN_EXPECTS(grad.rows == logits.rows && grad.cols == logits.cols,
                    "softmax_cross_entropy: grad is {}x{} but the logits are {}x{}", grad.rows,
                    grad.cols, logits.rows, logits.cols);
    detail::check_disjoint(logits.data, grad.data, "softmax_cross_entropy", "logits", "grad");
  }
  return detail::dispatch(
      exec, "softmax_cross_entropy",
      [&] { return reference::softmax_cross_entropy(logits, labels, grad); },
      [&] { return cpu::softmax_cross_entropy(logits, labels, grad); },
      [&] { return cuda::softmax_cross_entropy(exec, logits, labels, grad); });
}

loss_result weighted_softmax_cross_entropy(const executor& exec, dense_view<const float> logits,
                                           std::span<const std::int32_t> labels,
                                           std::span<const float> row_weights,
                                           dense_view<float> grad) {
  constexpr std::string_view function = "weighted_softmax_cross_entropy";
  check_labels(exec, logits, labels, function);
  BULKGNN_EXPECTS(static_cast<std::int64_t>(row_weights.size()) == logits.rows,
                  "{}: {} row weights for {} rows of logits", function, row_weights.size(),
                  logits.rows);
  if (detail::span_reachable(exec, row_weights.data(), function, "row_weights"))
    for (std::size_t r = 0; r < row_weights.size(); ++r)
      BULKGNN_EXPECTS(std::isfinite(row_weights[r]) && row_weights[r] >= 0.0f,
                      "{}: row {} has weight {}; weights must be finite and non-negative", function,
                      r, row_weights[r]);
  if (!grad.data.empty()) {
    detail::check_dense(exec, grad, function, "grad");
    BULKGNN_EXPECTS(grad.rows == logits.rows && grad.cols == logits.cols,
                    "{}: grad is {}x{} but the logits are {}x{}", function, grad.rows, grad.cols,
                    logits.rows, logits.cols);
    detail::check_disjoint(logits.data, grad.data, function, "logits", "grad");
  }
  return detail::dispatch(
      exec, function,
      [&] { return reference::weighted_softmax_cross_entropy(logits, labels, row_weights, grad); },
      [&] { return cpu::weighted_softmax_cross_entropy(logits, labels, row_weights, grad); });
}

std::int64_t count_correct(const executor& exec, dense_view<const float> logits,
                           std::span<const std::int32_t> labels) {
  check_labels(exec, logits, labels, "count_correct");
  return detail::dispatch(
      exec, "count_correct", [&] { return reference::count_correct(logits, labels); },
      [&] { return cpu::count_correct(logits, labels); },
      [&] { return cuda::count_correct(exec, logits, labels); });
}

loss_result binary_cross_entropy(const executor& exec, std::span<const float> scores,
                                 std::span<const float> labels, std::span<float> grad) {
  constexpr std::string_view function = "binary_cross_entropy";
  BULKGNN_EXPECTS(labels.size() == scores.size(), "{}: {} labels for {} scores", function,
                  labels.size(), scores.size());
  BULKGNN_EXPECTS(grad.empty() || grad.size() == scores.size(), "{}: {} gradients for {} scores",
                  function, grad.size(), scores.size());
  (void)detail::span_reachable(exec, scores.data(), function, "scores");
  if (detail::span_reachable(exec, labels.data(), function, "labels"))
    for (std::size_t i = 0; i < labels.size(); ++i)
      if (!(labels[i] >= 0.0f && labels[i] <= 1.0f))
        throw error(
            fmt::format("{}: label {} at index {} is outside [0, 1]", function, labels[i], i));
  if (!grad.empty()) detail::check_disjoint(scores, grad, function, "scores", "grad");
  return detail::dispatch(
      exec, function, [&] { return reference::binary_cross_entropy(scores, labels, grad); },
      [&] { return cpu::binary_cross_entropy(scores, labels, grad); },
      [&] { return cuda::binary_cross_entropy(exec, scores, labels, grad); });
}

}  // namespace bulkgnn::kernels
