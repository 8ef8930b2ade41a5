#pragma once

#include "bulkgnn/core/dense.hpp"
#include "bulkgnn/core/executor.hpp"
#include "bulkgnn/core/types.hpp"

#include <cstdint>
#include <optional>
#include <span>

namespace bulkgnn::kernels {

// Identifies the dropout masks of one training step.
struct dropout_key {
  std::uint32_t seed;
  std::uint32_t epoch;
  std::uint32_t minibatch;
  // Global vertex id of each row (a minibatch's input_nodes: destinations
  // come first at every layer, so row r of any layer is vertex row_ids[r]).
  // Keying masks by vertex makes a vertex's mask the same in a data-parallel
  // rank's slice as in the whole minibatch. Empty: keyed by row number.
  std::span<const vertex_t> row_ids = {};
};

// Philox stream layer of the dropout after model layer l, apart from the
// sampler's hop numbers.
inline constexpr std::uint32_t dropout_stream_base = 0x10000;

// The activation between layers, in place: x = dropout(relu(x)). Dropout is
// inverted (kept entries scaled by 1/(1-p), p resolved to 1/65536) and
// applied only when a key is given and p > 0; row r's mask comes from the
// Philox stream keyed {seed, epoch, minibatch, dropout_stream_base + layer,
// row_ids[r] (or r)}, 16 bits per entry (rules/dropout.hpp), so it depends on
// neither the thread count nor the back end. p must be in [0, 1), layer >= 0,
// and row_ids (when given) must cover every row.
void relu_dropout(const executor& exec, dense_view<float> x, float p,
                  const std::optional<dropout_key>& key, int layer);

// Backward of relu_dropout from its output y, in place: grad = dLoss/dy on
// entry, dLoss/dx on return. An entry passed iff y > 0, with the same 1/(1-p)
// scale (1 without dropout), so no mask needs keeping. y and grad have the
// same shape and do not overlap.
void relu_dropout_backward(const executor& exec, dense_view<const float> y, float p, bool dropout,
                           dense_view<float> grad);

}  // namespace bulkgnn::kernels
