#pragma once

#include "bulkgnn/core/csr.hpp"
#include "bulkgnn/kernels/relabel.hpp"
#include "bulkgnn/sampler/sampling_algorithm.hpp"

#include <cstdint>
#include <span>
#include <utility>
#include <vector>

// Small helpers shared by the samplers' hops: growing a bulk hop by hop, the
// streams' keys, and relabelling a per-destination draw.
namespace bulkgnn::sampler::detail {

inline csr_view pattern_of(csr_view graph) {
  graph.values = {};
  return graph;
}

// The minibatch ids that key the random streams (checked to fit by sample()).
inline std::vector<std::uint32_t> stream_ids(std::span<const std::int64_t> minibatch_ids) {
  return {minibatch_ids.begin(), minibatch_ids.end()};
}

// A bulk whose hop h grows from hop h - 1's sources (at h = 0 from the seeds,
// moved to the executor): layer(frontier, h) for each of `hops` hops.
template <class Layer>
bulk_sample grow_hop_by_hop(const executor& exec, segmented_vertices seeds,
                            std::span<const std::int64_t> minibatch_ids, std::size_t hops,
                            Layer&& layer) {
  bulk_sample bulk;
  bulk.minibatch_ids.assign(minibatch_ids.begin(), minibatch_ids.end());
  bulk.seeds = on_executor(exec, std::move(seeds));
  const segmented_vertices* frontier = &bulk.seeds;
  for (std::size_t hop = 0; hop < hops; ++hop) {
    bulk.layers.push_back(layer(*frontier, static_cast<std::uint32_t>(hop)));
    frontier = &bulk.layers.back().sources;
  }
  return bulk;
}

// The minibatch of each frontier row, where the executor reads it: with the
// row's vertex, what keys a per-destination draw's random stream.
[[nodiscard]] buffer<std::uint32_t> minibatch_of_rows(const executor& exec,
                                                      const segmented_vertices& frontier,
                                                      std::span<const std::int64_t> minibatch_ids);

// Row i of `drawn` holds the global ids frontier row i drew: less the
// minibatch's excluded edges (context.excluded), de-duplicated and relabelled
// per minibatch (stage "relabel"). A source reached only over an excluded
// edge is not reached, so the next hop does not grow from it.
[[nodiscard]] kernels::relabelled_blocks relabel_leaving_out_excluded(
    sampling_context& context, const segmented_vertices& frontier, csr_view drawn);

}  // namespace bulkgnn::sampler::detail
