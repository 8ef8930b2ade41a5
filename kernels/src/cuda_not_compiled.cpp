// The build without the CUDA back end: no device is ever visible, no cuda
// executor can be made, and so no cuda kernel is ever reached; the kernels
// are defined (throwing) so that the front doors link alike in both builds.
#include "../cuda/kernels.hpp"
#include "bulkgnn/core/error.hpp"
#include "bulkgnn/kernels/devices.hpp"

namespace bulkgnn::kernels {

bool cuda_compiled() { return false; }

std::vector<cuda_device> visible_cuda_devices() { return {}; }

void synchronize_device(int device) {
  throw option_error(
      fmt::format("synchronize_device: device {}: this build has no CUDA back end", device));
}

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

// Every kernel each back end implements, thrown; the parameters go unused.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-parameter"
#define BULKGNN_NOT_COMPILED_KERNEL(result, name, parameters) \
  result name(BULKGNN_EXECUTOR_FIRST parameters) { not_compiled(#name); }
BULKGNN_KERNELS_OF_EVERY_BACKEND(BULKGNN_NOT_COMPILED_KERNEL)
#undef BULKGNN_NOT_COMPILED_KERNEL
#pragma GCC diagnostic pop

relabelled_blocks relabel_by_segment(const executor&, const segmented_vertices&, csr_view,
                                     relabel_method) {
  not_compiled("relabel_by_segment");
}

void gemm_cublas(const executor&, gemm_op, gemm_op, float, dense_view<const float>,
                 dense_view<const float>, float, dense_view<float>) {
  not_compiled("gemm");
}

void column_sums_cublas(const executor&, dense_view<const float>, std::span<float>) {
  not_compiled("column_sums");
}

memory_space space_of(const void*) { return memory_space::host; }

}  // namespace cuda
}  // namespace bulkgnn::kernels
