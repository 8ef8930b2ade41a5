#pragma once

#include "bulkgnn/trainer/layers.hpp"

#include <span>
#include <string>
#include <string_view>

// The GNN layer kinds, registered in one table: each entry says what the
// layer is called, which tensors it holds, and how it weighs the adjacency it
// aggregates over in each kind of run. The model, the aggregation blocks,
// share and piece inference and full-batch training read these entries, not
// the kind; the CLI's --model choices and help come from the table.
namespace bulkgnn::trainer {

// How a layer weighs the entries of the adjacency it aggregates over (row v
// holds v's in-neighbours).
enum class adjacency_weights {
  row_mean,                   // 1/deg(v) for each in-neighbour (a mean)
  row_mean_with_self_loops,   // D̃⁻¹(A+I): the mean with v among its neighbours
  symmetric_with_self_loops,  // D̃^-1/2 (A+I) D̃^-1/2 (Kipf & Welling)
  as_sampled,                 // a sampled block's values, which the sampler computed
};

struct layer_entry {
  layer_kind kind;
  std::string_view name;     // as --model, checkpoints and sampler entries name it
  std::string_view summary;  // one line for help texts
  // PyG's names of one layer's tensors in its state_dict (convs.L.<name>).
  std::string_view weight_name;
  std::string_view bias_name;
  // The layer also adds its destinations' own rows times a weight of their
  // own (PyG's lin_r); empty for none.
  std::string_view root_weight_name;
  // A sampled block (minibatch training and sampled evaluation).
  adjacency_weights sampled_block;
  // The whole graph: full-neighbourhood inference, by shares or in pieces.
  adjacency_weights full_graph;
  // Full-batch training over the partitioned graph.
  adjacency_weights full_batch;

  [[nodiscard]] bool has_root_weight() const { return !root_weight_name.empty(); }
};

[[nodiscard]] std::span<const layer_entry> layer_table();
[[nodiscard]] const layer_entry& find_layer(layer_kind kind);
// option_error naming `option` and the registered names for any other name.
[[nodiscard]] const layer_entry& find_layer(std::string_view name, std::string_view option);
// "sage or gcn", for help texts and messages.
[[nodiscard]] std::string layer_names();

}  // namespace bulkgnn::trainer
