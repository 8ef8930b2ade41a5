#pragma once

#include "bulkgnn/sampler/sampler_table.hpp"

namespace bulkgnn::sampler {

// Layer-wise sampling after LADIES (Zou et al., 2019), with self loops: with
// Â = D̃⁻¹(A + I) and frontier F_j of minibatch j, column v is drawn with
// probability p_j(v) ∝ Σ_{u∈F_j} Â(u,v)² (computed as Q·(A + I) with
// Q(j,u) = 1/(deg(u)+1)²), fanouts[l] distinct columns per minibatch. The
// sources are F_j followed by the drawn columns; the block keeps the edges of
// A + I between them, weighted Â(u,v)/p_j(v) and row-normalised. Known gap: a
// self loop stored in A counts twice in p (as an edge and as I) but once in
// the block; imported OGB data and generated graphs store none.
[[nodiscard]] sampler_entry ladies_entry();

// FastGCN (Chen et al., 2018): LADIES with one global p(v) ∝ Σ_u Â(u,v)² for
// every minibatch. Since that draw ignores the frontier, a drawn vertex that
// no destination links to is left out of the minibatch (it would carry
// nothing to the seeds).
[[nodiscard]] sampler_entry fastgcn_entry();

}  // namespace bulkgnn::sampler
