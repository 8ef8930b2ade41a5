#pragma once

#include "bulkgnn/trainer/layer_table.hpp"

// Each layer kind's entry, defined in its own file; layer_table.cpp lists them.
namespace bulkgnn::trainer::layers {

[[nodiscard]] const layer_entry& sage_layer();
[[nodiscard]] const layer_entry& gcn_layer();
[[nodiscard]] const layer_entry& graph_conv_layer();

}  // namespace bulkgnn::trainer::layers
