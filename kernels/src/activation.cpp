#include "bulkgnn/kernels/activation.hpp"

#include <cmath>

#include "../cpu/kernels.hpp"
#include "../cuda/kernels.hpp"
#include "../reference/kernels.hpp"
#include "front_door.hpp"

namespace bulkgnn::kernels {
namespace {

rules::dropout_threshold threshold_for(float p) {
  const auto bits = static_cast<std::uint32_t>(std::lround(std::ldexp(static_cast<double>(p), 16)));
  return {bits, static_cast<float>(1.0 / (1.0 - std::ldexp(static_cast<double>(bits), -16)))};
}

}  // namespace

void relu_dropout(const executor& exec, dense_view<float> x, float p,
                  const std::optional<dropout_key>& key, int layer) {
  detail::check_dense(exec, x, "relu_dropout", "x");
  // p that rounds to 65536/65536 would drop everything and scale by 1/0.
  BULKGNN_EXPECTS(p >= 0.0f && p < 1.0f && threshold_for(p).bits < 65536,
                  "relu_dropout: p = {} is outside [0, 1)", p);
  BULKGNN_EXPECTS(layer >= 0, "relu_dropout: layer = {} is negative", layer);
  if (!key || p == 0.0f) {
    detail::dispatch(
        exec, "relu_dropout", [&] { reference::relu(x); }, [&] { cpu::relu(x); },
        [&] { cuda::relu(exec, x); });
    return;
  }
  BULKGNN_EXPECTS(key->row_ids.empty() || static_cast<std::int64_t>(key->row_ids.size()) >= x.rows,
                  "relu_dropout: key.row_ids has {} ids for {} rows", key->row_ids.size(), x.rows);
  (void)detail::span_reachable(exec, key->row_ids.data(), "relu_dropout", "key.row_ids");
  const rng_key step{key->seed, key->epoch, key->minibatch,
                     dropout_stream_base + static_cast<std::uint32_t>(layer), 0};
  const auto threshold = threshold_for(p);
  detail::dispatch(
      exec, "relu_dropout", [&] { reference::relu_dropout(x, threshold, step, key->row_ids); },
      [&] { cpu::relu_dropout(x, threshold, step, key->row_ids); },
      [&] { cuda::relu_dropout(exec, x, threshold, step, key->row_ids); });
}

void relu_dropout_backward(const executor& exec, dense_view<const float> y, float p, bool dropout,
                           dense_view<float> grad) {
  detail::check_dense(exec, y, "relu_dropout_backward", "y");
  detail::check_dense(exec, grad, "relu_dropout_backward", "grad");
  BULKGNN_EXPECTS(y.rows == grad.rows && y.cols == grad.cols,
                  "relu_dropout_backward: y is {}x{} but grad is {}x{}", y.rows, y.cols, grad.rows,
                  grad.cols);
  BULKGNN_EXPECTS(p >= 0.0f && p < 1.0f && threshold_for(p).bits < 65536,
                  "relu_dropout_backward: p = {} is outside [0, 1)", p);
  detail::check_disjoint(y.data, grad.data, "relu_dropout_backward", "y", "grad");
  const float scale = dropout && p > 0.0f ? threshold_for(p).scale : 1.0f;
  detail::dispatch(
      exec, "relu_dropout_backward", [&] { reference::relu_dropout_backward(y, scale, grad); },
      [&] { cpu::relu_dropout_backward(y, scale, grad); },
      [&] { cuda::relu_dropout_backward(exec, y, scale, grad); });
}

}  // namespace bulkgnn::kernels
