#include "kernels.hpp"

namespace bulkgnn::kernels::reference {

void fill_rows_with_bias(std::span<const float> bias, dense_view<float> out) {
  for (std::int64_t r = 0; r < out.rows; ++r)
    for (std::int64_t j = 0; j < out.cols; ++j) out.row(r)[j] = bias[j];
}

void column_sums(dense_view<const float> m, std::span<float> sums) {
  for (std::int64_t j = 0; j < m.cols; ++j) {
    float sum = 0.0f;
    for (std::int64_t r = 0; r < m.rows; ++r) sum += m.row(r)[j];
    sums[j] = sum;
  }
}

}  // namespace bulkgnn::kernels::reference
