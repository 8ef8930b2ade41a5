#pragma once

#include "bulkgnn/kernels/sample_rows.hpp"

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace bulkgnn::sampler {

struct sampler_options {
  // A sampler of sampler_table() by name or alias: sage, ladies, fastgcn,
  // random-walk, ...
  std::string kind = "sage";
  // One entry per hop, hop 0 starting from the seeds (PyG's num_neighbors
  // order). What a fanout counts is the sampler's (sampler_entry::fanout);
  // node-wise: -1 takes every neighbour.
  std::vector<std::int64_t> fanouts;
  // Draw with replacement; draw proportionally to edge weights (for the
  // samplers whose entry takes them).
  kernels::replacement replacement = kernels::replacement::without;
  bool weighted = false;
  std::uint32_t seed = 0;
  // Blocks per minibatch, the model's layers: 0 or the number of hops for
  // the samplers whose hops are the layers; any count for those that run
  // every layer on one subgraph (sampler_entry::any_depth: shadow).
  std::int64_t layers = 0;
  // The sampler's own parameters (sampler_entry::parameters) by name; one
  // left out takes its default.
  std::map<std::string, std::int64_t, std::less<>> parameters = {};
  // Where a sampler that prepares the whole graph once (Cluster-GCN's METIS
  // clusters, GraphSAINT's presampled counts) keeps what it made, keyed by
  // the graph and its options, and finds it on the next run; empty: nowhere.
  std::string cache_dir = {};
};

// Throws option_error naming the option if `options` is impossible for its
// sampler on a graph with (or without) edge weights.
void validate(const sampler_options& options, bool graph_weighted);

// The blocks a minibatch of `options` holds: sampler_options.layers, or one
// per hop.
[[nodiscard]] std::int64_t block_count(const sampler_options& options);

// The value of the sampler's parameter `name` in `options`, or its default.
[[nodiscard]] std::int64_t parameter(const sampler_options& options, std::string_view name);

}  // namespace bulkgnn::sampler
