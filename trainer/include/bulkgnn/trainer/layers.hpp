#pragma once

#include "bulkgnn/core/csr.hpp"
#include "bulkgnn/core/dense.hpp"
#include "bulkgnn/core/executor.hpp"

#include <cstdint>
#include <optional>
#include <span>
#include <string>

namespace bulkgnn::trainer {

// sage: PyG SAGEConv with the mean aggregator (node-wise sampling).
// gcn: out = (B·H)·W + b with the block's weights B (LADIES, FastGCN).
enum class layer_kind { sage, gcn };

// "sage" or "gcn"; anything else is an option_error naming --model.
[[nodiscard]] layer_kind parse_layer_kind(const std::string& name);
[[nodiscard]] std::string layer_kind_name(layer_kind kind);

// A block ready for aggregation: `forward` has the block's shape with values
// = aggregation weights; `backward` is its transpose (empty unless built for
// training).
struct aggregation_block {
  csr_matrix forward;
  csr_matrix backward;
};

// sage: mean over the row's stored entries (weights 1/deg, ignoring
// block.values); gcn: block.values used as they are (LADIES weights; an
// option_error if absent). The block's destinations are its first rows
// sources, so it must have rows <= cols.
[[nodiscard]] aggregation_block make_aggregation_block(const executor& exec,
                                                       const csr_matrix& block, layer_kind kind,
                                                       bool with_backward);

// The whole graph as one block (rows = cols = n, destinations = all nodes),
// for full-neighbourhood inference, or full-graph training with
// with_backward: sage → mean over in-neighbours (row v of `graph` holds the
// in-neighbours of v, sorted); gcn → D̃⁻¹(A+I), the self loop added and each
// row normalised to sum 1, as LADIES and GCN evaluate. Edge weights of
// `graph` are ignored, as the samplers ignore them.
[[nodiscard]] aggregation_block full_graph_block(const executor& exec, csr_view graph,
                                                 layer_kind kind, bool with_backward = false);

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
// inverted (kept entries scaled by 1/(1-p)) and applied only when a key is
// given; row r's mask comes from the Philox stream keyed {seed, epoch,
// minibatch, dropout_stream_base + layer, row_ids[r] (or r)}, one 32-bit word per entry, so
// it does not depend on the thread count.
void relu_dropout(dense_view<float> x, float p, std::optional<dropout_key> key, int layer);

// Backward of relu_dropout from its output y, in place: grad = dLoss/dy on
// entry, dLoss/dx on return. An entry passed iff y > 0, with the same 1/(1-p)
// scale (1 without dropout), so no mask needs keeping.
void relu_dropout_backward(dense_view<const float> y, float p, bool dropout,
                           dense_view<float> grad);

}  // namespace bulkgnn::trainer
