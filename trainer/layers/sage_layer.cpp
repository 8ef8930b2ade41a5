#include "layer_entries.hpp"

namespace bulkgnn::trainer::layers {

// PyG's SAGEConv with the mean aggregator: out = mean(x_u : u ∈ N(v))·W + x_v·W_root + b.
// It reads the pattern of a block, never its values, so it takes blocks of
// any sampler.
const layer_entry& sage_layer() {
  static const layer_entry entry{
      .kind = layer_kind::sage,
      .name = "sage",
      .summary = "GraphSAGE (PyG SAGEConv, mean aggregator, with a root weight)",
      .weight_name = "lin_l.weight",
      .bias_name = "lin_l.bias",
      .root_weight_name = "lin_r.weight",
      .sampled_block = adjacency_weights::row_mean,
      .full_graph = adjacency_weights::row_mean,
      .full_batch = adjacency_weights::row_mean};
  return entry;
}

}  // namespace bulkgnn::trainer::layers
