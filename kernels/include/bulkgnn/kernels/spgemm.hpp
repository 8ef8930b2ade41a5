#pragma once

#include "bulkgnn/core/csr.hpp"
#include "bulkgnn/core/executor.hpp"

namespace bulkgnn::kernels {

// General sparse product C = A·B over (+, ×); a pattern operand counts as all
// ones. Each row of C has its columns sorted and holds only entries that some
// product touched (explicit zeros from cancellation are kept). Products are
// summed in double in the order of A's row, then B's row, then rounded once,
// so every back end gives bit-identical values. C always carries values (a
// product of two patterns counts paths). The cpu back end keeps a dense
// accumulator of b.cols doubles per thread.
[[nodiscard]] csr_matrix spgemm(const executor& exec, csr_view a, csr_view b);

// Element-wise sum C = A + B of two matrices of the same shape whose rows have
// sorted columns; a pattern operand counts as all ones. C has sorted, distinct
// columns and always carries values; a column repeated within a row of A or B
// is summed in double, A's entries first, and rounded once.
[[nodiscard]] csr_matrix add(const executor& exec, csr_view a, csr_view b);

// Scales every row of `m` in place so that its values sum to 1; rows that sum
// to zero are left as they are. `m` must carry values.
void normalize_rows(const executor& exec, csr_matrix& m);

}  // namespace bulkgnn::kernels
