// The build without the CUDA back end: no device is ever visible, no cuda
// executor can be made, and so no cuda kernel is ever reached; the kernels
// are defined (throwing) so that the front doors link alike in both builds.
#include "../cuda/kernels.hpp"
#include "bulkgnn/core/error.hpp"
#include "bulkgnn/kernels/devices.hpp"

namespace bulkgnn::kernels {

bool cuda_compiled() { return false; }

std::vector<cuda_device> visible_cuda_devices() { return {}; }

executor make_cuda_executor(int device) {
  throw option_error(
      fmt::format("make_cuda_executor: device {}: this build has no CUDA back end (configure with "
                  "BULKGNN_ENABLE_CUDA=ON where nvcc is installed, e.g. the cuda-release preset)",
                  device));
}

namespace cuda {
namespace {

[[noreturn]] void not_compiled(const char* function) {
  throw error(fmt::format("{}: the CUDA back end is not compiled into this build", function));
}

}  // namespace

current_device::current_device(const executor&) { not_compiled("current_device"); }

current_device::~current_device() = default;

buffer<std::uint32_t> repeat_per_segment(const executor&, std::span<const std::int64_t>,
                                         std::span<const std::uint32_t>) {
  not_compiled("repeat_per_segment");
}

csr_matrix sample_rows(const executor&, csr_view, std::span<const vertex_t>, const row_streams&,
                       const row_sampling_options&) {
  not_compiled("sample_rows");
}

relabelled_blocks relabel_by_segment(const executor&, const segmented_vertices&, csr_view,
                                     relabel_method) {
  not_compiled("relabel_by_segment");
}

void spmm(const executor&, csr_view, dense_view<const float>, dense_view<float>) {
  not_compiled("spmm");
}

csr_matrix transpose(const executor&, csr_view) { not_compiled("transpose"); }

csr_matrix gather_rows(const executor&, csr_view, std::span<const vertex_t>) {
  not_compiled("gather_rows");
}

void gather_dense_rows(const executor&, dense_view<const float>, std::span<const vertex_t>,
                       dense_view<float>) {
  not_compiled("gather_dense_rows");
}

void scatter_dense_rows(const executor&, dense_view<const float>, std::span<const vertex_t>, float,
                        dense_view<float>) {
  not_compiled("scatter_dense_rows");
}

std::int64_t gather_cached_rows(const executor&, const cached_rows&, std::span<const vertex_t>,
                                dense_view<float>) {
  not_compiled("gather_cached_rows");
}

csr_matrix columns_as_vertices(const executor&, csr_view, std::span<const std::int64_t>,
                               const segmented_vertices&, std::int64_t) {
  not_compiled("columns_as_vertices");
}

buffer<float> lookup_entries(const executor&, csr_view, std::span<const vertex_t>,
                             const segmented_vertices&) {
  not_compiled("lookup_entries");
}

csr_matrix extract_blocks(const executor&, csr_view, const segmented_vertices&,
                          const segmented_vertices&, std::span<const float>, bool) {
  not_compiled("extract_blocks");
}

buffer<vertex_t> sorted_distinct(const executor&, std::span<const vertex_t>) {
  not_compiled("sorted_distinct");
}

buffer<vertex_t> positions_in_sorted(const executor&, std::span<const vertex_t>,
                                     std::span<const vertex_t>) {
  not_compiled("positions_in_sorted");
}

csr_matrix frontier_selection(const executor&, const segmented_vertices&, std::span<const vertex_t>,
                              csr_view, std::span<const vertex_t>, std::int64_t) {
  not_compiled("frontier_selection");
}

csr_matrix rename_columns(const executor&, csr_view, std::span<const vertex_t>,
                          std::span<const vertex_t>, std::int64_t) {
  not_compiled("rename_columns");
}

csr_matrix spread_to_segment_starts(const executor&, csr_view, std::span<const std::int64_t>) {
  not_compiled("spread_to_segment_starts");
}

void invert_probabilities(const executor&, std::span<float>) {
  not_compiled("invert_probabilities");
}

csr_matrix spgemm(const executor&, csr_view, csr_view) { not_compiled("spgemm"); }

csr_matrix add(const executor&, csr_view, csr_view) { not_compiled("add"); }

void normalize_rows(const executor&, csr_matrix&) { not_compiled("normalize_rows"); }

void gemm(const executor&, gemm_op, gemm_op, float, dense_view<const float>,
          dense_view<const float>, float, dense_view<float>) {
  not_compiled("gemm");
}

void gemm_cublas(const executor&, gemm_op, gemm_op, float, dense_view<const float>,
                 dense_view<const float>, float, dense_view<float>) {
  not_compiled("gemm");
}

void relu(const executor&, dense_view<float>) { not_compiled("relu"); }

void relu_dropout(const executor&, dense_view<float>, rules::dropout_threshold, rng_key,
                  std::span<const vertex_t>) {
  not_compiled("relu_dropout");
}

void relu_dropout_backward(const executor&, dense_view<const float>, float, dense_view<float>) {
  not_compiled("relu_dropout_backward");
}

void fill_rows_with_bias(const executor&, std::span<const float>, dense_view<float>) {
  not_compiled("fill_rows_with_bias");
}

void column_sums(const executor&, dense_view<const float>, std::span<float>) {
  not_compiled("column_sums");
}

void column_sums_cublas(const executor&, dense_view<const float>, std::span<float>) {
  not_compiled("column_sums");
}

void fill(const executor&, std::span<float>, float) { not_compiled("fill"); }

void scale(const executor&, std::span<float>, float) { not_compiled("scale"); }

loss_result softmax_cross_entropy(const executor&, dense_view<const float>,
                                  std::span<const std::int32_t>, dense_view<float>) {
  not_compiled("softmax_cross_entropy");
}

std::int64_t count_correct(const executor&, dense_view<const float>,
                           std::span<const std::int32_t>) {
  not_compiled("count_correct");
}

void adam_step(const executor&, const rules::adam_constants&, std::span<float>,
               std::span<const float>, std::span<float>, std::span<float>) {
  not_compiled("adam_step");
}

memory_space space_of(const void*) { return memory_space::host; }

}  // namespace cuda
}  // namespace bulkgnn::kernels
