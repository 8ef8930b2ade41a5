#pragma once

#include "bulkgnn/core/csr.hpp"
#include "bulkgnn/core/executor.hpp"
#include "bulkgnn/core/segmented.hpp"
#include "bulkgnn/kernels/sample_rows.hpp"
#include "bulkgnn/sampler/row_source.hpp"

#include <cstdint>
#include <span>

// The steps of a layer-wise hop, shared by LADIES, FastGCN and the sampler
// programs that compose them (sampler/program/), so that a program written
// as LADIES draws LADIES' minibatches bit for bit.
namespace bulkgnn::sampler::detail {

// Q·A, or Q·(A + I) = Q·A + Q with self_loops, for Q (one row per minibatch,
// vertex ids as columns, kernels::frontier_selection's) whose columns are in
// `distinct` (ascending), A's row of distinct[k] being rows.rows.row(
// rows.row_of[k]). Q's columns are renamed to those rows in order, so the
// product sums in the order it would over the whole graph. A pattern Q counts
// as ones.
[[nodiscard]] csr_matrix selection_times_rows(const executor& exec, csr_view q,
                                              std::span<const vertex_t> distinct,
                                              const gathered_rows& rows, bool self_loops);

// What a draw of one row per minibatch reads, on the executor: the row
// numbers 0..count-1 (all 0 for one shared row, FastGCN's), each row's
// minibatch, and zero key rows, since a row's number depends on the bulk and
// its stream must not.
struct per_minibatch_rows {
  buffer<vertex_t> rows;
  buffer<std::uint32_t> minibatch_of_row;
  buffer<vertex_t> zero_key_rows;

  [[nodiscard]] kernels::row_streams streams(std::uint32_t seed, std::uint32_t epoch,
                                             std::uint32_t hop) const {
    return {seed, epoch, hop, minibatch_of_row, zero_key_rows};
  }
};
[[nodiscard]] per_minibatch_rows rows_per_minibatch(const executor& exec,
                                                    std::span<const std::int64_t> minibatch_ids,
                                                    bool one_shared_row);

// Each segment of `frontier` followed by the columns that its minibatch's
// row of `drawn` holds (one row per segment), each once, in order of first
// appearance: the next hop's frontier.
[[nodiscard]] segmented_vertices frontier_then_drawn(const executor& exec,
                                                     const segmented_vertices& frontier,
                                                     csr_view drawn);

// The block rows of `destinations` (a sub-list of the frontier per segment)
// over `sources`: the entries of A (+ I with self_loops) between them, each
// times column_scale of its source, from `rows`: the whole graph in memory,
// or the rows of `distinct` (the frontier, ascending) fetched.
[[nodiscard]] csr_matrix extract_layer_blocks(const executor& exec,
                                              const segmented_vertices& destinations,
                                              const segmented_vertices& sources,
                                              std::span<const float> column_scale,
                                              std::span<const vertex_t> distinct,
                                              const gathered_rows& rows, bool self_loops);

}  // namespace bulkgnn::sampler::detail
