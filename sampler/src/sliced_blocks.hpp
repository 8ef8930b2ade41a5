#pragma once

// The block rows of a split layer-wise hop when each rank holds only its
// columns of the frontier's rows (row_source::rows_in_columns): each rank
// finds the block entries among its columns, every rank gathers them all,
// and each puts back the rows of its part's destinations (in any order:
// extract_blocks sorts each row by column, and a pattern's repeated entries
// are equal).

#include "bulkgnn/core/csr.hpp"
#include "bulkgnn/core/segmented.hpp"
#include "bulkgnn/sampler/row_source.hpp"

#include <cstdint>
#include <span>
#include <vector>

namespace bulkgnn::sampler::detail {

// An entry of A from a frontier row into its minibatch's sources: the row's
// position in the whole frontier and the source's vertex id.
struct block_entry {
  std::int32_t destination;
  vertex_t column;
};

// The entries of `slices` (row k: the columns this rank holds of A's row
// distinct[k]) that lead from a vertex of whole segment j into
// sources.segment(j).
[[nodiscard]] std::vector<block_entry> block_entries_in_slices(const segmented_vertices& whole,
                                                               const segmented_vertices& sources,
                                                               std::span<const vertex_t> distinct,
                                                               const column_slices& slices);

// Row i: the entries of `entries` (every rank's) whose destination is part
// vertex i's position in `whole` (part being a sub-list of whole per
// segment), followed by the self loop where A's row lacks it; a pattern with `num_vertices`
// columns. What with_self_loops gives on whole rows, restricted to the sources (every destination
// is one).
[[nodiscard]] csr_matrix part_rows_from_entries(const segmented_vertices& whole,
                                                const segmented_vertices& part,
                                                std::vector<block_entry> entries,
                                                std::int64_t num_vertices);

}  // namespace bulkgnn::sampler::detail
