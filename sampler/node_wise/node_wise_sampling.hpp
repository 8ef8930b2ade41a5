#pragma once

#include "bulkgnn/sampler/sampler_table.hpp"

namespace bulkgnn::sampler {

// GraphSAGE's node-wise sampling (Hamilton et al., 2017): at hop l each
// frontier vertex draws fanouts[l] of its in-neighbours (uniformly or by
// edge weight, with or without replacement), keyed by (minibatch, vertex).
[[nodiscard]] sampler_entry node_wise_entry();

}  // namespace bulkgnn::sampler
