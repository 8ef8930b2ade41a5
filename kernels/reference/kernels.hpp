#pragma once

#include <span>

#include "bulkgnn/core/buffer.hpp"
#include "bulkgnn/core/csr.hpp"
#include "bulkgnn/core/dense.hpp"
#include "bulkgnn/core/segmented.hpp"
#include "bulkgnn/kernels/gemm.hpp"
#include "bulkgnn/kernels/loss.hpp"
#include "bulkgnn/kernels/optimizer.hpp"
#include "bulkgnn/kernels/relabel.hpp"
#include "bulkgnn/kernels/rules/dropout.hpp"
#include "bulkgnn/kernels/sample_rows.hpp"
#include "bulkgnn/kernels/spmm.hpp"

// Deliberately naive, serial implementations of every kernel: ordered maps as
// accumulators, full sorts, std::set for Floyd's algorithm. They are the oracle
// the other back ends are tested against, so clarity beats speed here.
// Arguments have been validated by the front doors (kernels/src).
namespace bulkgnn::kernels::reference {

[[nodiscard]] csr_matrix gather_rows(csr_view a, std::span<const vertex_t> rows);

[[nodiscard]] csr_matrix spgemm(csr_view a, csr_view b);
[[nodiscard]] csr_matrix add(csr_view a, csr_view b);
void normalize_rows(csr_matrix& m);

void spmm(csr_view a, dense_view<const float> x, dense_view<float> y);
[[nodiscard]] csr_matrix transpose(csr_view a);
void gather_dense_rows(dense_view<const float> x, std::span<const vertex_t> rows,
                       dense_view<float> out);
void scatter_dense_rows(dense_view<const float> x, std::span<const vertex_t> rows, float scale,
                        dense_view<float> out);
std::int64_t gather_cached_rows(const cached_rows& x, std::span<const vertex_t> rows,
                                dense_view<float> out);

[[nodiscard]] csr_matrix sample_rows(csr_view a, std::span<const vertex_t> rows,
                                     const row_streams& streams,
                                     const row_sampling_options& options);

[[nodiscard]] std::vector<keyed_entry> smallest_keyed_entries(
    csr_view a, std::span<const vertex_t> rows, std::span<const std::int64_t> first_position,
    const row_streams& streams, std::int64_t fanout);

[[nodiscard]] csr_matrix take_smallest_keys(std::span<const keyed_entry> candidates,
                                            std::int64_t rows, std::int64_t cols,
                                            std::int64_t fanout);

[[nodiscard]] relabelled_blocks relabel_by_segment(const segmented_vertices& destinations,
                                                   csr_view sampled);
[[nodiscard]] csr_matrix extract_blocks(csr_view a, const segmented_vertices& rows,
                                        const segmented_vertices& cols,
                                        std::span<const float> column_scale, bool add_self_loops);
[[nodiscard]] csr_matrix columns_as_vertices(csr_view blocks,
                                             std::span<const std::int64_t> row_offsets,
                                             const segmented_vertices& sources,
                                             std::int64_t num_vertices);
[[nodiscard]] buffer<float> lookup_entries(csr_view a, std::span<const vertex_t> rows,
                                           const segmented_vertices& cols);

// Dense operations of the train step (gemm.hpp, activation.hpp, bias.hpp,
// loss.hpp, optimizer.hpp). `step` is the dropout key's stream with row 0;
// row r uses row_ids[r] (or r) in its place.
void gemm(gemm_op op_a, gemm_op op_b, float alpha, dense_view<const float> a,
          dense_view<const float> b, float beta, dense_view<float> c);
void relu(dense_view<float> x);
void relu_dropout(dense_view<float> x, rules::dropout_threshold threshold, rng_key step,
                  std::span<const vertex_t> row_ids);
void relu_dropout_backward(dense_view<const float> y, float scale, dense_view<float> grad);
void fill_rows_with_bias(std::span<const float> bias, dense_view<float> out);
void column_sums(dense_view<const float> m, std::span<float> sums);
void fill(std::span<float> x, float value);
void scale(std::span<float> x, float factor);
[[nodiscard]] loss_result softmax_cross_entropy(dense_view<const float> logits,
                                                std::span<const std::int32_t> labels,
                                                dense_view<float> grad);
[[nodiscard]] std::int64_t count_correct(dense_view<const float> logits,
                                         std::span<const std::int32_t> labels);
void adam_step(const adam_constants& constants, std::span<float> parameters,
               std::span<const float> gradients, std::span<float> m, std::span<float> v);

// The sampler's frontier bookkeeping (frontier.hpp).
[[nodiscard]] buffer<vertex_t> sorted_distinct(std::span<const vertex_t> vertices);
[[nodiscard]] buffer<vertex_t> positions_in_sorted(std::span<const vertex_t> values,
                                                   std::span<const vertex_t> sorted);
[[nodiscard]] buffer<std::uint32_t> repeat_per_segment(std::span<const std::int64_t> offsets,
                                                       std::span<const std::uint32_t> values);
[[nodiscard]] csr_matrix frontier_selection(const segmented_vertices& frontier,
                                            std::span<const vertex_t> distinct,
                                            std::span<const edge_t> degrees,
                                            std::int64_t num_vertices);
[[nodiscard]] csr_matrix frontier_selection(const segmented_vertices& frontier,
                                            std::span<const vertex_t> distinct, csr_view rows,
                                            std::span<const vertex_t> row_of,
                                            std::int64_t num_vertices);
[[nodiscard]] csr_matrix rename_columns(csr_view m, std::span<const vertex_t> sorted_keys,
                                        std::span<const vertex_t> mapped, std::int64_t cols);
[[nodiscard]] csr_matrix with_self_loops(csr_view rows, std::span<const vertex_t> row_of,
                                         std::span<const vertex_t> vertices);
[[nodiscard]] csr_matrix spread_to_segment_starts(csr_view per_segment,
                                                  std::span<const std::int64_t> offsets);
[[nodiscard]] csr_matrix columns_in_range(csr_view m, vertex_t first, vertex_t last);
void invert_probabilities(std::span<float> values);

// normalize.hpp
float minimum(std::span<const float> x);
void shifted_row_sums(dense_view<const float> x, float shift, std::span<double> sums);
// ids: the vertex of each row, or nullptr for row i = vertex i.
void shift_and_divide_rows(dense_view<float> rows, float shift, std::span<const float> divisors,
                           const vertex_t* ids);

}  // namespace bulkgnn::kernels::reference
