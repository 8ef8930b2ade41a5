#pragma once

#include "bulkgnn/core/segmented.hpp"
#include "bulkgnn/sampler/minibatch.hpp"

#include <cstdint>
#include <span>
#include <string_view>

// Bulks cut from whole minibatches, for samplers whose draws for one seed
// depend on the minibatch's other seeds (induced subgraphs, LABOR-i's shared
// importances): a slice of a minibatch's seeds is restrict_to_seeds of the
// whole minibatch, which every rank samples.
namespace bulkgnn::sampler {

// A bulk holding `parts` (minibatches of `layers` blocks each, DGL order),
// as a sampler lays one out: layer h's sources are the prefix of each part's
// input nodes that its block L-1-h reads.
[[nodiscard]] bulk_sample bulk_of(std::span<const minibatch> parts,
                                  std::span<const std::int64_t> ids, std::size_t layers);

// The bulk of `part`'s slices of `sampled`, a bulk sampled from `whole`'s
// seeds: segment j of `part` must list distinct seeds of segment j of
// `whole`, in any order (an error naming the sampler `kind` otherwise).
[[nodiscard]] bulk_sample parts_of(const bulk_sample& sampled, const segmented_vertices& whole,
                                   const segmented_vertices& part, std::string_view kind);

}  // namespace bulkgnn::sampler
