#pragma once

#include "bulkgnn/core/csr.hpp"
#include "bulkgnn/core/executor.hpp"
#include "bulkgnn/core/segmented.hpp"

#include <span>
#include <vector>

namespace bulkgnn::kernels {

struct relabelled_blocks {
  // Per segment: the segment's destinations, then every other sampled column
  // once, in order of first appearance in the segment's rows (the PyG/DGL
  // order; deterministic, and it costs one hash probe per sampled entry).
  segmented_vertices sources;
  // One row per destination (segments back to back); column ids are local
  // positions in the segment's sources; values carried over from `sampled`.
  // cols is the largest segment's source count.
  csr_matrix blocks;
};

// How the cuda back end finds each sampled vertex's first appearance in its
// segment: a stable radix sort, or a hash table (one probe sequence per
// entry). Both give the same result; the host back ends always probe a
// per-thread hash map.
enum class relabel_method { sort, hash };

// De-duplicates and relabels the sampled neighbours of each segment to local
// ids. Row r of `sampled` belongs to destination destinations.vertices[r]; its
// column ids are global. Destinations must be distinct within a segment.
[[nodiscard]] relabelled_blocks relabel_by_segment(const executor& exec,
                                                   const segmented_vertices& destinations,
                                                   csr_view sampled,
                                                   relabel_method method = relabel_method::sort);

// The block R·A·C of each segment: for segment j, one row per vertex u of
// rows.segment(j), holding the entries a(u, v) with v in cols.segment(j)
// (distinct vertices), as local column positions in ascending order, with
// value a(u, v) · column_scale[cols.offsets[j] + position] (a pattern `a`
// counts as ones). With add_self_loops, (u, u) counts as an entry of value 1
// where `a` does not store it.
[[nodiscard]] csr_matrix extract_blocks(const executor& exec, csr_view a,
                                        const segmented_vertices& rows,
                                        const segmented_vertices& cols,
                                        std::span<const float> column_scale, bool add_self_loops);

// `blocks` (one row per destination, segments of rows given by row_offsets,
// as in a sampled layer) with each column c of a row in segment j replaced
// by the vertex sources.segment(j)[c], and sources' vertex count as cols:
// local ids back to global ones, undoing relabel_by_segment's numbering.
[[nodiscard]] csr_matrix columns_as_vertices(const executor& exec, csr_view blocks,
                                             std::span<const std::int64_t> row_offsets,
                                             const segmented_vertices& sources,
                                             std::int64_t num_vertices);

// The value a(rows[j], v) for each vertex v of cols.segment(j), one per
// entry of cols.vertices, 0 where `a` stores nothing (a pattern `a` counts
// as ones). One row of `a` per segment; those rows must hold sorted, distinct
// columns (as spgemm and add produce), since look-ups are binary searches:
// the cost does not grow with the length of a's rows.
[[nodiscard]] buffer<float> lookup_entries(const executor& exec, csr_view a,
                                           std::span<const vertex_t> rows,
                                           const segmented_vertices& cols);

}  // namespace bulkgnn::kernels
