#pragma once

#include "bulkgnn/core/csr.hpp"
#include "bulkgnn/core/dense.hpp"
#include "bulkgnn/core/executor.hpp"

#include <span>

// Row normalisation of node features (loader::row_normalizer): every value
// shifted by the table's minimum, each row divided by its shifted sum. Each
// is exact in any order or sums one row in column order, so every back end
// and thread count gives the same bits.
namespace bulkgnn::kernels {

// The smallest value of x that is not NaN; +infinity for none. (Each
// comparison keeps the smaller so far, which a NaN never replaces.)
[[nodiscard]] float minimum(const executor& exec, std::span<const float> x);

// sums[r] = Σ_j (x[r][j] − shift), summed in column order in double.
// sums.size() must be x.rows.
void shifted_row_sums(const executor& exec, dense_view<const float> x, float shift,
                      std::span<double> sums);

// rows[i][j] = (rows[i][j] − shift) / divisors[ids[i]]: row i of a gathered
// block holds vertex ids[i]. Every id must be in [0, divisors.size()) and
// its divisor positive.
void shift_and_divide_rows(const executor& exec, dense_view<float> rows, float shift,
                           std::span<const float> divisors, std::span<const vertex_t> ids);

// The same over a whole table: row v by divisors[v], one divisor per row.
void shift_and_divide_rows(const executor& exec, dense_view<float> table, float shift,
                           std::span<const float> divisors);

}  // namespace bulkgnn::kernels
