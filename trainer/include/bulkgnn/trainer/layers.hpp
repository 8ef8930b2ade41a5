#pragma once

#include "bulkgnn/core/csr.hpp"
#include "bulkgnn/core/dense.hpp"
#include "bulkgnn/core/executor.hpp"

#include <string>

namespace bulkgnn::trainer {

// The registered layer kinds; what each is and how it weighs the adjacency
// is its entry in layer_table.hpp.
enum class layer_kind { sage, gcn, graph_conv };

// The kind registered as `name`; anything else is an option_error listing
// the registered names.
[[nodiscard]] layer_kind parse_layer_kind(const std::string& name);
[[nodiscard]] std::string layer_kind_name(layer_kind kind);

// A block ready for aggregation: `forward` has the block's shape with values
// = aggregation weights; `backward` is its transpose (empty unless built for
// training).
struct aggregation_block {
  csr_matrix forward;
  csr_matrix backward;
};

// The block weighed as the layer's entry says for sampled blocks
// (layer_entry::sampled_block): row_mean takes the mean over the row's
// stored entries, ignoring block.values; as_sampled keeps block.values (an
// option_error if absent). The block's destinations are its first rows
// sources, so it must have rows <= cols.
[[nodiscard]] aggregation_block make_aggregation_block(const executor& exec,
                                                       const csr_matrix& block, layer_kind kind,
                                                       bool with_backward);

// The whole graph as one block (rows = cols = n, destinations = all nodes),
// for full-neighbourhood inference, or full-graph training with
// with_backward, weighed as the layer's entry says for the whole graph
// (layer_entry::full_graph): the mean over in-neighbours (row v of `graph`
// holds the in-neighbours of v, sorted), or D̃⁻¹(A+I) with the self loop
// added. Edge weights of `graph` are ignored, as the samplers ignore them.
[[nodiscard]] aggregation_block full_graph_block(const executor& exec, csr_view graph,
                                                 layer_kind kind, bool with_backward = false);

}  // namespace bulkgnn::trainer
