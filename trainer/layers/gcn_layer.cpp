#include "layer_entries.hpp"

namespace bulkgnn::trainer::layers {

// PyG's GCNConv: out = Â·x·W + b. Over sampled blocks Â is the block's
// values, the importance weights LADIES and FastGCN compute; over the whole
// graph it is D̃⁻¹(A+I), as LADIES evaluates, or in full-batch training the
// symmetric D̃^-1/2 (A+I) D̃^-1/2 of Kipf & Welling.
const layer_entry& gcn_layer() {
  static const layer_entry entry{
      .kind = layer_kind::gcn,
      .name = "gcn",
      .summary = "GCN (PyG GCNConv over the sampler's weights; D̃^-1/2(A+I)D̃^-1/2 full-batch)",
      .weight_name = "lin.weight",
      .bias_name = "bias",
      .root_weight_name = {},
      .sampled_block = adjacency_weights::as_sampled,
      .full_graph = adjacency_weights::row_mean_with_self_loops,
      .full_batch = adjacency_weights::symmetric_with_self_loops};
  return entry;
}

}  // namespace bulkgnn::trainer::layers
