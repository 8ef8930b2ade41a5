#pragma once

#include "bulkgnn/core/csr.hpp"
#include "bulkgnn/core/segmented.hpp"
#include "bulkgnn/kernels/exclude_edges.hpp"

#include <span>

// A link minibatch's own edges left out of LADIES and FastGCN (host back
// ends): out of LADIES' distribution, as if the graph lacked them, and out
// of both samplers' blocks.
namespace bulkgnn::sampler::detail {

// LADIES' column weights Q·A + Q (row j: segment j of the bulk) as if each
// segment's excluded edges were not in A: entry (j, v) is recomputed where
// an excluded edge v → u with u in segment j's frontier touches it, summed as
// kernels::spgemm and kernels::add sum (in double, Q's row order, each sum
// rounded once), so that it is bit for bit the weight the graph without
// those edges gives; an entry left at zero leaves its row. The degrees in Q
// stay the whole graph's, as the loss's graph has them. `q` is
// kernels::frontier_selection's (vertex ids as columns), A's row of
// distinct[k] is rows.row(row_of[k]), and `weights` may hold any column range
// of the product (a rank's share of a split hop).
[[nodiscard]] csr_matrix weights_without_excluded(csr_view weights, csr_view q, csr_view rows,
                                                  std::span<const vertex_t> row_of,
                                                  std::span<const vertex_t> distinct,
                                                  const kernels::excluded_edges& excluded);

// `blocks` (rows: destinations.vertices in order, in their segments;
// columns: positions in the segment's `sources`) without the entries that
// their segment excludes, before the rows are normalised. A destination's
// self loop (LADIES' I) is no edge of the graph and stays.
void drop_excluded_entries(csr_matrix& blocks, const segmented_vertices& destinations,
                           const segmented_vertices& sources,
                           const kernels::excluded_edges& excluded);

}  // namespace bulkgnn::sampler::detail
