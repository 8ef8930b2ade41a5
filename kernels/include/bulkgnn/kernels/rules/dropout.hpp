#pragma once

#include <cstdint>

#include "bulkgnn/core/host_device.hpp"
#include "bulkgnn/core/rng.hpp"

// ReLU followed by inverted dropout, entry by entry. Entry j of a row keeps
// its value when its 16 random bits, half j % 2 (low half first) of word j / 2
// of the row's Philox stream, are at least p·2^16; kept entries are scaled by
// 1/(1 − p), p resolved to 1/65536 (see dropout_threshold).
namespace bulkgnn::kernels::rules {

struct dropout_threshold {
  std::uint32_t bits;  // p·2^16, rounded
  float scale;         // 1 / (1 − bits/2^16)
};

// The Philox stream of one row: {seed, epoch, minibatch, stream layer, row
// id}, the row id being the row's vertex id when the caller keys by vertex.
BULKGNN_HOST_DEVICE inline rng_key dropout_row_stream(rng_key step, std::uint32_t row_id) {
  step.row = row_id;
  return step;
}

BULKGNN_HOST_DEVICE inline bool dropout_keeps(std::uint32_t word, std::int64_t entry,
                                              std::uint32_t threshold_bits) {
  const std::uint32_t bits = (word >> (16 * (entry % 2))) & 0xFFFFu;
  return bits >= threshold_bits;
}

// x < 0 ? 0 : x is std::max(x, 0)'s rule: NaN and −0 pass as they are.
BULKGNN_HOST_DEVICE inline float relu(float x) { return x < 0.0f ? 0.0f : x; }

// The mask is exactly scale or +0, so a dropped entry becomes ±0 or NaN.
BULKGNN_HOST_DEVICE inline float relu_dropout(float x, bool keep, float scale) {
  return relu(x) * (scale * static_cast<float>(keep));
}

// Backward from the layer's output y: the entry passed iff y > 0.
BULKGNN_HOST_DEVICE inline float relu_dropout_backward(float y, float grad, float scale) {
  return y > 0.0f ? grad * scale : 0.0f;
}

}  // namespace bulkgnn::kernels::rules
