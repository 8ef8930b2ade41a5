#pragma once

#include "bulkgnn/sampler/sampler_table.hpp"

namespace bulkgnn::sampler {

// LABOR-0 (Balin and Çatalyürek, "Layer-Neighbor Sampling", NeurIPS 2023;
// DGL's LaborSampler without importance sampling): at hop l every vertex t
// that a minibatch's frontier reaches draws one uniform variate r_t, and
// frontier vertex v keeps its neighbour t iff r_t < fanouts[l] / deg(v).
// Each neighbour is kept with probability min(1, fanouts[l] / deg(v)), as in
// node-wise sampling (in expectation fanouts[l] of them, not exactly), but
// the destinations of a minibatch share the variates, so a neighbour that one
// keeps the others mostly keep too: fewer distinct vertices per hop, fewer
// features to gather. The variate of t in minibatch m at hop l comes from the
// stream (seed, epoch, m, l, t), so a slice of the seeds samples alone.
[[nodiscard]] sampler_entry labor_entry();

// LABOR-i and LABOR-* (the paper's §3.2; DGL's LaborSampler with
// importance_sampling=i, or -1): the minibatch's reached vertices get
// importances π_t, shared by its destinations, and destination v keeps t
// with probability min(1, c_v·π_t), c_v making fanouts[l] the expected
// count; importance_iterations fixed-point steps (-1: until the expected
// count of distinct vertices stops falling) choose π to lower that count.
// The blocks carry each destination's self-normalised Horvitz–Thompson
// weights, for the graph-conv layer. π spans the minibatch, so a slice of
// its seeds is cut from the whole minibatch.
[[nodiscard]] sampler_entry labor_importance_entry();

}  // namespace bulkgnn::sampler
