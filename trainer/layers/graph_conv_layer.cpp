#include "layer_entries.hpp"

namespace bulkgnn::trainer::layers {

// PyG's GraphConv: out = (Σ_u e_vu·x_u)·W + b + x_v·W_root, the weights e_vu
// the sampler's (GraphSAINT's normalised aggregation weights), over the
// whole graph the mean (GraphSAINT evaluates with mean aggregation).
const layer_entry& graph_conv_layer() {
  static const layer_entry entry{
      .kind = layer_kind::graph_conv,
      .name = "graph-conv",
      .summary =
          "GraphConv (PyG GraphConv over the sampler's weights, with a root weight; the "
          "mean over the whole graph)",
      .weight_name = "lin_rel.weight",
      .bias_name = "lin_rel.bias",
      .root_weight_name = "lin_root.weight",
      .sampled_block = adjacency_weights::as_sampled,
      .full_graph = adjacency_weights::row_mean,
      .full_batch = adjacency_weights::row_mean};
  return entry;
}

}  // namespace bulkgnn::trainer::layers
