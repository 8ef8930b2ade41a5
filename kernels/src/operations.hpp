#pragma once

// Every kernel operation, declared once. A back end's header declares its
// entry points from these lists (kernels/{reference,cpu,cuda}/kernels.hpp),
// and the build without CUDA defines the cuda ones to throw
// (cuda_not_compiled.cpp), so an operation's parameters are written here
// and in its definitions only. What each computes is its front door's
// comment (kernels/include/bulkgnn/kernels/); the front doors have validated
// the arguments. The host back ends take the parameters as listed and run on
// the calling executor's threads (front_door.hpp's dispatch); the CUDA back
// end takes the executor first, for its stream and memory.
//
// A new operation: a KERNEL line in the list of the back ends that
// implement it, a definition in each, and a front door that dispatches to
// them. A new back end: a namespace whose header expands the lists with its
// form of BULKGNN_DECLARE_*_KERNEL.
#include <cstdint>
#include <span>
#include <vector>

#include "bulkgnn/core/buffer.hpp"
#include "bulkgnn/core/csr.hpp"
#include "bulkgnn/core/dense.hpp"
#include "bulkgnn/core/executor.hpp"
#include "bulkgnn/core/segmented.hpp"
#include "bulkgnn/kernels/exclude_edges.hpp"
#include "bulkgnn/kernels/gemm.hpp"
#include "bulkgnn/kernels/loss.hpp"
#include "bulkgnn/kernels/optimizer.hpp"
#include "bulkgnn/kernels/relabel.hpp"
#include "bulkgnn/kernels/rules/adam.hpp"
#include "bulkgnn/kernels/rules/dropout.hpp"
#include "bulkgnn/kernels/sample_rows.hpp"
#include "bulkgnn/kernels/spmm.hpp"
#include "bulkgnn/kernels/walks.hpp"

// clang-format off
// Sparse products and row moves (spgemm.hpp, spmm.hpp): the host back ends'
// sums bit for bit, the transpose in their order.
#define BULKGNN_SPARSE_KERNELS(KERNEL) \
  KERNEL([[nodiscard]] csr_matrix, gather_rows, (csr_view a, std::span<const vertex_t> rows)) \
  KERNEL([[nodiscard]] csr_matrix, spgemm, (csr_view a, csr_view b)) \
  KERNEL([[nodiscard]] csr_matrix, add, (csr_view a, csr_view b)) \
  KERNEL(void, normalize_rows, (csr_matrix& m)) \
  KERNEL(void, spmm, (csr_view a, dense_view<const float> x, dense_view<float> y)) \
  KERNEL(void, sddmm, (csr_view pattern, dense_view<const float> a, dense_view<const float> b, std::span<float> out)) \
  KERNEL([[nodiscard]] csr_matrix, transpose, (csr_view a)) \
  KERNEL(void, gather_dense_rows, (dense_view<const float> x, std::span<const vertex_t> rows, dense_view<float> out)) \
  KERNEL(void, scatter_dense_rows, (dense_view<const float> x, std::span<const vertex_t> rows, float scale, dense_view<float> out)) \
  KERNEL(std::int64_t, gather_cached_rows, (const cached_rows& x, std::span<const vertex_t> rows, dense_view<float> out))

// Drawing and cutting blocks (sample_rows.hpp, relabel.hpp). Segment offsets
// (of destinations and of the result's sources) live in host-readable memory,
// pinned on a cuda executor, so that the host reads the segments' structure
// and the device reads it through UVA.
#define BULKGNN_SAMPLING_KERNELS(KERNEL) \
  KERNEL([[nodiscard]] csr_matrix, sample_rows, (csr_view a, std::span<const vertex_t> rows, const row_streams& streams, const row_sampling_options& options)) \
  KERNEL([[nodiscard]] csr_matrix, sample_rows_with_shared_variates, (csr_view a, std::span<const vertex_t> rows, const row_streams& streams, std::int64_t fanout)) \
  KERNEL([[nodiscard]] csr_matrix, sample_rows_with_importance, (csr_view a, const segmented_vertices& rows, const row_streams& streams, std::int64_t fanout, std::int64_t iterations)) \
  KERNEL([[nodiscard]] csr_matrix, extract_blocks, (csr_view a, const segmented_vertices& rows, const segmented_vertices& cols, std::span<const float> column_scale, bool add_self_loops)) \
  KERNEL([[nodiscard]] csr_matrix, columns_as_vertices, (csr_view blocks, std::span<const std::int64_t> row_offsets, const segmented_vertices& sources, std::int64_t num_vertices)) \
  KERNEL([[nodiscard]] buffer<float>, lookup_entries, (csr_view a, std::span<const vertex_t> rows, const segmented_vertices& cols))

// The sampler's frontier bookkeeping (frontier.hpp); segment offsets in
// host-readable memory, `values` where the executor reaches them.
#define BULKGNN_FRONTIER_KERNELS(KERNEL) \
  KERNEL([[nodiscard]] buffer<vertex_t>, sorted_distinct, (std::span<const vertex_t> vertices)) \
  KERNEL([[nodiscard]] buffer<vertex_t>, positions_in_sorted, (std::span<const vertex_t> values, std::span<const vertex_t> sorted)) \
  KERNEL([[nodiscard]] buffer<std::uint32_t>, repeat_per_segment, (std::span<const std::int64_t> offsets, std::span<const std::uint32_t> values)) \
  KERNEL([[nodiscard]] csr_matrix, frontier_selection, (const segmented_vertices& frontier, std::span<const vertex_t> distinct, csr_view rows, std::span<const vertex_t> row_of, std::int64_t num_vertices)) \
  KERNEL([[nodiscard]] csr_matrix, rename_columns, (csr_view m, std::span<const vertex_t> sorted_keys, std::span<const vertex_t> mapped, std::int64_t cols)) \
  KERNEL([[nodiscard]] csr_matrix, spread_to_segment_starts, (csr_view per_segment, std::span<const std::int64_t> offsets)) \
  KERNEL([[nodiscard]] csr_matrix, with_self_loops, (csr_view rows, std::span<const vertex_t> row_of, std::span<const vertex_t> vertices)) \
  KERNEL(void, invert_probabilities, (std::span<float> values))

// The train step's dense operations (gemm.hpp, activation.hpp, bias.hpp,
// loss.hpp, optimizer.hpp). `step` is the dropout key's stream with row 0;
// row r uses row_ids[r] (or r) in its place.
#define BULKGNN_DENSE_KERNELS(KERNEL) \
  KERNEL(void, gemm, (gemm_op op_a, gemm_op op_b, float alpha, dense_view<const float> a, dense_view<const float> b, float beta, dense_view<float> c)) \
  KERNEL(void, relu, (dense_view<float> x)) \
  KERNEL(void, relu_dropout, (dense_view<float> x, rules::dropout_threshold threshold, rng_key step, std::span<const vertex_t> row_ids)) \
  KERNEL(void, relu_dropout_backward, (dense_view<const float> y, float scale, dense_view<float> grad)) \
  KERNEL(void, fill_rows_with_bias, (std::span<const float> bias, dense_view<float> out)) \
  KERNEL(void, column_sums, (dense_view<const float> m, std::span<float> sums)) \
  KERNEL(void, fill, (std::span<float> x, float value)) \
  KERNEL(void, scale, (std::span<float> x, float factor)) \
  KERNEL(void, multiply, (std::span<const float> a, std::span<const float> b, std::span<float> out)) \
  KERNEL([[nodiscard]] loss_result, softmax_cross_entropy, (dense_view<const float> logits, std::span<const std::int32_t> labels, dense_view<float> grad)) \
  KERNEL([[nodiscard]] std::int64_t, count_correct, (dense_view<const float> logits, std::span<const std::int32_t> labels)) \
  KERNEL([[nodiscard]] loss_result, binary_cross_entropy, (std::span<const float> scores, std::span<const float> labels, std::span<float> grad)) \
  KERNEL(void, adam_step, (const rules::adam_constants& constants, std::span<float> parameters, std::span<const float> gradients, std::span<float> m, std::span<float> v))

// What only the host back ends implement: leaving a link minibatch's edges
// out of its blocks, node2vec's walks, the cpu's two-pass draws, the host
// form of relabelling (cuda's takes a relabel_method), the frontier from
// degrees, and normalize.hpp's operations (no CUDA kernel yet: the front door
// says so by name). `ids` of
// shift_and_divide_rows: the vertex of each row, or nullptr for row i =
// vertex i.
#define BULKGNN_HOST_ONLY_KERNELS(KERNEL) \
  KERNEL([[nodiscard]] std::vector<keyed_entry>, smallest_keyed_entries, (csr_view a, std::span<const vertex_t> rows, std::span<const std::int64_t> first_position, const row_streams& streams, std::int64_t fanout)) \
  KERNEL([[nodiscard]] csr_matrix, take_smallest_keys, (std::span<const keyed_entry> candidates, std::int64_t rows, std::int64_t cols, std::int64_t fanout)) \
  KERNEL([[nodiscard]] relabelled_blocks, relabel_by_segment, (const segmented_vertices& destinations, csr_view sampled)) \
  KERNEL([[nodiscard]] csr_matrix, drop_excluded_edges, (csr_view drawn, const segmented_vertices& frontier, const excluded_edges& excluded)) \
  KERNEL([[nodiscard]] csr_matrix, frontier_selection, (const segmented_vertices& frontier, std::span<const vertex_t> distinct, std::span<const edge_t> degrees, std::int64_t num_vertices)) \
  KERNEL([[nodiscard]] csr_matrix, columns_in_range, (csr_view m, vertex_t first, vertex_t last)) \
  KERNEL(float, minimum, (std::span<const float> x)) \
  KERNEL(void, shifted_row_sums, (dense_view<const float> x, float shift, std::span<double> sums)) \
  KERNEL(void, node2vec_walks, (csr_view graph, std::span<const vertex_t> starts, const node2vec_options& options, std::span<vertex_t> out)) \
  KERNEL([[nodiscard]] loss_result, weighted_softmax_cross_entropy, (dense_view<const float> logits, std::span<const std::int32_t> labels, std::span<const float> row_weights, dense_view<float> grad)) \
  KERNEL(void, shift_and_divide_rows, (dense_view<float> rows, float shift, std::span<const float> divisors, const vertex_t* ids))

// clang-format on

// Every back end implements these.
#define BULKGNN_KERNELS_OF_EVERY_BACKEND(KERNEL) \
  BULKGNN_SPARSE_KERNELS(KERNEL)                 \
  BULKGNN_SAMPLING_KERNELS(KERNEL)               \
  BULKGNN_FRONTIER_KERNELS(KERNEL)               \
  BULKGNN_DENSE_KERNELS(KERNEL)

// The forms of an entry point: a host back end's as listed, a device back
// end's with the executor first (every operation has parameters, so the
// executor is never followed by a stray comma).
#define BULKGNN_DECLARE_HOST_KERNEL(result, name, parameters) result name parameters;
#define BULKGNN_EXECUTOR_FIRST(...) const executor &exec, __VA_ARGS__
#define BULKGNN_DECLARE_DEVICE_KERNEL(result, name, parameters) \
  result name(BULKGNN_EXECUTOR_FIRST parameters);
