#pragma once

#include "bulkgnn/core/csr.hpp"
#include "bulkgnn/core/executor.hpp"

#include <span>

namespace bulkgnn::kernels {

// Selection SpGEMM Q·A where Q has a single 1 per row, in column rows[i]:
// row i of the result is row rows[i] of `a` (values kept). Rows may repeat.
[[nodiscard]] csr_matrix gather_rows(const executor& exec, csr_view a,
                                     std::span<const vertex_t> rows);

}  // namespace bulkgnn::kernels
