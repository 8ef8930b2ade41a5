#include <algorithm>

#include "common.hpp"
#include "kernels.hpp"

namespace bulkgnn::kernels::cpu {

void fill_rows_with_bias(std::span<const float> bias, dense_view<float> out) {
  for_pieces(out.rows, out.cols, [&](std::int64_t begin, std::int64_t end) {
    for (std::int64_t r = begin; r < end; ++r)
      std::copy(bias.begin(), bias.end(), out.row(r).begin());
  });
}

// Threads take column ranges; within one, rows are added in order, a row's
// columns at a time so that the loop vectorises across columns without
// reordering any column's sum.
void column_sums(dense_view<const float> m, std::span<float> sums) {
  constexpr std::int64_t columns_per_piece = 64;
  const std::int64_t pieces = (m.cols + columns_per_piece - 1) / columns_per_piece;
  for_pieces(pieces, m.rows * columns_per_piece, [&](std::int64_t begin, std::int64_t end) {
    const std::int64_t col0 = begin * columns_per_piece;
    const std::int64_t col1 = std::min(m.cols, end * columns_per_piece);
    float* out = sums.data();
    std::fill(out + col0, out + col1, 0.0f);
    for (std::int64_t r = 0; r < m.rows; ++r) {
      const float* row = m.row(r).data();
      for (std::int64_t j = col0; j < col1; ++j) out[j] += row[j];
    }
  });
}

}  // namespace bulkgnn::kernels::cpu
