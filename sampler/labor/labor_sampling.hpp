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

}  // namespace bulkgnn::sampler
