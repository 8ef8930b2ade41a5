#include <algorithm>
#include <limits>

#include "kernels.hpp"

namespace bulkgnn::kernels::reference {

float minimum(std::span<const float> x) {
  float lowest = std::numeric_limits<float>::infinity();
  for (const float v : x) lowest = std::min(lowest, v);
  return lowest;
}

void shifted_row_sums(dense_view<const float> x, float shift, std::span<double> sums) {
  for (std::int64_t r = 0; r < x.rows; ++r) {
    double sum = 0;
    for (const float v : x.row(r)) sum += static_cast<double>(v - shift);
    sums[static_cast<std::size_t>(r)] = sum;
  }
}

void shift_and_divide_rows(dense_view<float> rows, float shift, std::span<const float> divisors,
                           const vertex_t* ids) {
  for (std::int64_t i = 0; i < rows.rows; ++i) {
    const auto vertex = ids != nullptr ? ids[i] : i;
    const float divisor = divisors[static_cast<std::size_t>(vertex)];
    for (float& v : rows.row(i)) v = (v - shift) / divisor;
  }
}

}  // namespace bulkgnn::kernels::reference
