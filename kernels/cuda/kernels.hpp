#pragma once

#include "bulkgnn/core/csr.hpp"
#include "bulkgnn/core/dense.hpp"
#include "bulkgnn/core/executor.hpp"
#include "bulkgnn/kernels/gemm.hpp"
#include "bulkgnn/kernels/loss.hpp"
#include "bulkgnn/kernels/relabel.hpp"
#include "bulkgnn/kernels/rules/adam.hpp"
#include "bulkgnn/kernels/rules/dropout.hpp"
#include "bulkgnn/kernels/sample_rows.hpp"
#include "bulkgnn/kernels/spmm.hpp"

#include <span>

// The CUDA back end's kernels, as the front doors call them (host code sees
// no CUDA type here). Each gives output bit-identical to the reference back
// end; the per-element decisions are the __host__ __device__ rules in
// kernels/include/bulkgnn/kernels/rules/, which the host tests check. Array
// arguments are in memory the executor reaches (device or pinned host); the
// front doors checked what the host can read, and the kernels check what it
// cannot (vertex ids in range) and report through throw_argument_error. In a
// build without CUDA, cuda_not_compiled.cpp defines each to throw.
namespace bulkgnn::kernels::cuda {

// Makes the executor's GPU the calling thread's current one for the scope,
// so that its kernels launch into its stream from any thread (pipeline
// stages and ranks start on GPU 0). The front doors hold one around every
// cuda kernel.
class current_device {
 public:
  explicit current_device(const executor& exec);
  ~current_device();
  current_device(const current_device&) = delete;
  current_device& operator=(const current_device&) = delete;

 private:
  int previous_ = 0;
  bool changed_ = false;
};

// `offsets` in host-readable memory (pinned), `values` where the device
// reaches them.
[[nodiscard]] buffer<std::uint32_t> repeat_per_segment(const executor& exec,
                                                       std::span<const std::int64_t> offsets,
                                                       std::span<const std::uint32_t> values);

[[nodiscard]] csr_matrix sample_rows(const executor& exec, csr_view a,
                                     std::span<const vertex_t> rows, const row_streams& streams,
                                     const row_sampling_options& options);

// Segment offsets (destinations' and the result's sources') live in
// host-readable memory, pinned on a cuda executor, so that the host reads the
// segments' structure and the device reads it through UVA.
[[nodiscard]] relabelled_blocks relabel_by_segment(const executor& exec,
                                                   const segmented_vertices& destinations,
                                                   csr_view sampled, relabel_method method);

[[nodiscard]] csr_matrix columns_as_vertices(const executor& exec, csr_view blocks,
                                             std::span<const std::int64_t> row_offsets,
                                             const segmented_vertices& sources,
                                             std::int64_t num_vertices);

[[nodiscard]] buffer<float> lookup_entries(const executor& exec, csr_view a,
                                           std::span<const vertex_t> rows,
                                           const segmented_vertices& cols);

[[nodiscard]] csr_matrix extract_blocks(const executor& exec, csr_view a,
                                        const segmented_vertices& rows,
                                        const segmented_vertices& cols,
                                        std::span<const float> column_scale, bool add_self_loops);

// frontier.hpp's operations; segment offsets in host-readable memory.
[[nodiscard]] buffer<vertex_t> sorted_distinct(const executor& exec,
                                               std::span<const vertex_t> vertices);
[[nodiscard]] buffer<vertex_t> positions_in_sorted(const executor& exec,
                                                   std::span<const vertex_t> values,
                                                   std::span<const vertex_t> sorted);
[[nodiscard]] csr_matrix frontier_selection(const executor& exec,
                                            const segmented_vertices& frontier,
                                            std::span<const vertex_t> distinct, csr_view rows,
                                            std::span<const vertex_t> row_of,
                                            std::int64_t num_vertices);
[[nodiscard]] csr_matrix rename_columns(const executor& exec, csr_view m,
                                        std::span<const vertex_t> sorted_keys,
                                        std::span<const vertex_t> mapped, std::int64_t cols);
[[nodiscard]] csr_matrix spread_to_segment_starts(const executor& exec, csr_view per_segment,
                                                  std::span<const std::int64_t> offsets);
void invert_probabilities(const executor& exec, std::span<float> values);

// spgemm.hpp's operations, with the host back ends' sums bit for bit.
[[nodiscard]] csr_matrix spgemm(const executor& exec, csr_view a, csr_view b);
[[nodiscard]] csr_matrix add(const executor& exec, csr_view a, csr_view b);
void normalize_rows(const executor& exec, csr_matrix& m);

// Y = A·X with the host back ends' sums, and the transpose with their order
// (spmm.hpp).
void spmm(const executor& exec, csr_view a, dense_view<const float> x, dense_view<float> y);
[[nodiscard]] csr_matrix transpose(const executor& exec, csr_view a);

[[nodiscard]] csr_matrix gather_rows(const executor& exec, csr_view a,
                                     std::span<const vertex_t> rows);
void gather_dense_rows(const executor& exec, dense_view<const float> x,
                       std::span<const vertex_t> rows, dense_view<float> out);
void scatter_dense_rows(const executor& exec, dense_view<const float> x,
                        std::span<const vertex_t> rows, float scale, dense_view<float> out);

[[nodiscard]] std::int64_t gather_cached_rows(const executor& exec, const cached_rows& x,
                                              std::span<const vertex_t> rows,
                                              dense_view<float> out);

// The train step's dense operations (gemm.hpp, activation.hpp, bias.hpp,
// loss.hpp, optimizer.hpp) with the host back ends' bits; `step` is the
// dropout key's stream with row 0, as for the cpu back end.
void gemm(const executor& exec, gemm_op op_a, gemm_op op_b, float alpha, dense_view<const float> a,
          dense_view<const float> b, float beta, dense_view<float> c);
// gemm_mode::fast: cuBLAS's SGEMM on the executor's stream, TF32 off.
void gemm_cublas(const executor& exec, gemm_op op_a, gemm_op op_b, float alpha,
                 dense_view<const float> a, dense_view<const float> b, float beta,
                 dense_view<float> c);
void relu(const executor& exec, dense_view<float> x);
void relu_dropout(const executor& exec, dense_view<float> x, rules::dropout_threshold threshold,
                  rng_key step, std::span<const vertex_t> row_ids);
void relu_dropout_backward(const executor& exec, dense_view<const float> y, float scale,
                           dense_view<float> grad);
void fill_rows_with_bias(const executor& exec, std::span<const float> bias, dense_view<float> out);
void column_sums(const executor& exec, dense_view<const float> m, std::span<float> sums);
// gemm_mode::fast: cuBLAS's SGEMV of mᵀ and a vector of ones.
void column_sums_cublas(const executor& exec, dense_view<const float> m, std::span<float> sums);
void fill(const executor& exec, std::span<float> x, float value);
void scale(const executor& exec, std::span<float> x, float factor);
[[nodiscard]] loss_result softmax_cross_entropy(const executor& exec,
                                                dense_view<const float> logits,
                                                std::span<const std::int32_t> labels,
                                                dense_view<float> grad);
[[nodiscard]] std::int64_t count_correct(const executor& exec, dense_view<const float> logits,
                                         std::span<const std::int32_t> labels);
void adam_step(const executor& exec, const rules::adam_constants& constants,
               std::span<float> parameters, std::span<const float> gradients, std::span<float> m,
               std::span<float> v);

// Where `pointer` lives as the CUDA runtime sees it: device, pinned host
// (page-locked, reachable through UVA) or host (pageable, unreachable from a
// kernel).
[[nodiscard]] memory_space space_of(const void* pointer);

}  // namespace bulkgnn::kernels::cuda
