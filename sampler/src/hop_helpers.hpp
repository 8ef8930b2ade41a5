#pragma once

#include "bulkgnn/core/csr.hpp"

#include <cstdint>
#include <span>
#include <vector>

// Small helpers shared by the whole-minibatch and the split sampling paths.
namespace bulkgnn::sampler::detail {

inline csr_view pattern_of(csr_view graph) {
  graph.values = {};
  return graph;
}

// The minibatch ids that key the random streams (checked to fit by sample()).
inline std::vector<std::uint32_t> stream_ids(std::span<const std::int64_t> minibatch_ids) {
  return {minibatch_ids.begin(), minibatch_ids.end()};
}

}  // namespace bulkgnn::sampler::detail
