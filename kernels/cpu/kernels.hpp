#pragma once

#include <span>

#include "bulkgnn/core/csr.hpp"
#include "bulkgnn/core/dense.hpp"
#include "bulkgnn/core/segmented.hpp"
#include "bulkgnn/kernels/relabel.hpp"
#include "bulkgnn/kernels/sample_rows.hpp"

// oneTBB implementations of every kernel. Each gives output bit-identical to
// the reference back end: same draws from the same Philox streams, same
// summation order. Arguments have been validated by the front doors.
namespace bulkgnn::kernels::cpu {

[[nodiscard]] csr_matrix gather_rows(csr_view a, std::span<const vertex_t> rows);

[[nodiscard]] csr_matrix spgemm(csr_view a, csr_view b);
[[nodiscard]] csr_matrix add(csr_view a, csr_view b);
void normalize_rows(csr_matrix& m);

void spmm(csr_view a, dense_view<const float> x, dense_view<float> y);
[[nodiscard]] csr_matrix transpose(csr_view a);
void gather_dense_rows(dense_view<const float> x, std::span<const vertex_t> rows,
                       dense_view<float> out);

[[nodiscard]] csr_matrix sample_rows(csr_view a, std::span<const vertex_t> rows,
                                     const row_streams& streams,
                                     const row_sampling_options& options);

[[nodiscard]] relabelled_blocks relabel_by_segment(const segmented_vertices& destinations,
                                                   csr_view sampled);
[[nodiscard]] csr_matrix extract_blocks(csr_view a, const segmented_vertices& rows,
                                        const segmented_vertices& cols,
                                        std::span<const float> column_scale, bool add_self_loops);
[[nodiscard]] std::vector<float> lookup_entries(csr_view a, std::span<const vertex_t> rows,
                                                const segmented_vertices& cols);

}  // namespace bulkgnn::kernels::cpu
