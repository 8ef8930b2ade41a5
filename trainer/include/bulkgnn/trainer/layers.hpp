#pragma once

#include "bulkgnn/core/csr.hpp"
#include "bulkgnn/core/dense.hpp"
#include "bulkgnn/core/executor.hpp"

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

}  // namespace bulkgnn::trainer
