#pragma once

#include <string_view>

#include "../src/operations.hpp"

// oneTBB implementations of every kernel. Each gives output bit-identical to
// the reference back end: same draws from the same Philox streams, same
// summation order. Arguments have been validated by the front doors.
namespace bulkgnn::kernels::cpu {

BULKGNN_KERNELS_OF_EVERY_BACKEND(BULKGNN_DECLARE_HOST_KERNEL)
BULKGNN_HOST_ONLY_KERNELS(BULKGNN_DECLARE_HOST_KERNEL)

// The GEMM microkernel this machine runs: avx512, avx2 or portable.
[[nodiscard]] std::string_view gemm_kernel_name();

}  // namespace bulkgnn::kernels::cpu
