#pragma once

#include "../src/operations.hpp"

// Deliberately naive, serial implementations of every kernel: ordered maps as
// accumulators, full sorts, std::set for Floyd's algorithm. They are the oracle
// the other back ends are tested against, so clarity beats speed here.
// Arguments have been validated by the front doors (kernels/src).
namespace bulkgnn::kernels::reference {

BULKGNN_KERNELS_OF_EVERY_BACKEND(BULKGNN_DECLARE_HOST_KERNEL)
BULKGNN_HOST_ONLY_KERNELS(BULKGNN_DECLARE_HOST_KERNEL)

}  // namespace bulkgnn::kernels::reference
