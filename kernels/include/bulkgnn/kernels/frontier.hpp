#pragma once

#include "bulkgnn/core/buffer.hpp"
#include "bulkgnn/core/csr.hpp"
#include "bulkgnn/core/executor.hpp"
#include "bulkgnn/core/segmented.hpp"

#include <cstdint>
#include <span>

// The bookkeeping of a sampling hop around the sampling and relabelling
// kernels: which vertices a frontier holds, the layer-wise selection matrix
// Q, renamings between vertex ids and fetched rows, self loops, and the
// importance weights 1/p. Written as kernels so that a hop runs entirely on
// the executor (no host loops in sampler/).
namespace bulkgnn::kernels {

// The distinct values of `vertices`, ascending.
[[nodiscard]] buffer<vertex_t> sorted_distinct(const executor& exec,
                                               std::span<const vertex_t> vertices);

// For each value, its position in `sorted` (ascending, distinct), which must
// hold every value.
[[nodiscard]] buffer<vertex_t> positions_in_sorted(const executor& exec,
                                                   std::span<const vertex_t> values,
                                                   std::span<const vertex_t> sorted);

// Per-element copies of per-segment values: element i of segment j gets
// values[j] (the minibatch id that keys each frontier row's random stream).
[[nodiscard]] buffer<std::uint32_t> repeat_per_segment(const executor& exec,
                                                       std::span<const std::int64_t> offsets,
                                                       std::span<const std::uint32_t> values);

// The rows of Q for layer-wise sampling: row j holds, for each vertex u of
// segment j of `frontier` in ascending order, the weight Â(u,·)² =
// 1/(deg(u)+1)² of A + I's row u, with global vertex ids as columns
// (num_vertices of them). Row u of A is rows.row(row_of[k]) where `distinct`
// (ascending) holds u at position k.
[[nodiscard]] csr_matrix frontier_selection(const executor& exec,
                                            const segmented_vertices& frontier,
                                            std::span<const vertex_t> distinct, csr_view rows,
                                            std::span<const vertex_t> row_of,
                                            std::int64_t num_vertices);

// The same from the degrees of A's rows alone: degrees[k] is the length of
// A's row distinct[k]. A rank that holds only some columns of the frontier's
// rows (the split layer-wise hop) still knows each whole row's degree.
// Host back ends only so far.
[[nodiscard]] csr_matrix frontier_selection(const executor& exec,
                                            const segmented_vertices& frontier,
                                            std::span<const vertex_t> distinct,
                                            std::span<const edge_t> degrees,
                                            std::int64_t num_vertices);

// `m` with each column c renamed to mapped[k] where sorted_keys[k] == c (every
// column must be a key), and `cols` columns. An order-preserving renaming
// keeps every product with `m` summing in the same order.
[[nodiscard]] csr_matrix rename_columns(const executor& exec, csr_view m,
                                        std::span<const vertex_t> sorted_keys,
                                        std::span<const vertex_t> mapped, std::int64_t cols);

// Row i is rows.row(row_of[i]) followed by the self loop vertices[i] when the
// row lacks it (last, where extract_blocks places the self loop it adds).
[[nodiscard]] csr_matrix with_self_loops(const executor& exec, csr_view rows,
                                         std::span<const vertex_t> row_of,
                                         std::span<const vertex_t> vertices);

// One row per element of a segmented list (offsets.back() rows): row j of
// `per_segment` becomes the first row of segment j, every other row is
// empty. Every segment must be non-empty. relabel_by_segment expects one row
// per destination; layer-wise sampling draws one row per minibatch.
[[nodiscard]] csr_matrix spread_to_segment_starts(const executor& exec, csr_view per_segment,
                                                  std::span<const std::int64_t> offsets);

// The entries of `m` whose column is in [first, last), in stored order, with
// their values; the same shape. A rank that owns the columns [first, last)
// of a layer-wise hop computes those columns of Q·(A + I) from these rows
// with every sum in the same order as from the whole rows.
[[nodiscard]] csr_matrix columns_in_range(const executor& exec, csr_view m, vertex_t first,
                                          vertex_t last);

// values[i] = 1 / values[i]; every value must be positive and finite (the
// probabilities of drawn vertices).
void invert_probabilities(const executor& exec, std::span<float> values);

}  // namespace bulkgnn::kernels
