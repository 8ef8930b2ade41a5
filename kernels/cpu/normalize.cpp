#include <tbb/parallel_reduce.h>

#include <algorithm>
#include <limits>

#include "common.hpp"
#include "kernels.hpp"

namespace bulkgnn::kernels::cpu {

// min is exact in any order, so the parallel reduction is deterministic.
float minimum(std::span<const float> x) {
  return tbb::parallel_reduce(
      tbb::blocked_range<std::size_t>(0, x.size(), 4096), std::numeric_limits<float>::infinity(),
      [&](const tbb::blocked_range<std::size_t>& range, float lowest) {
        for (std::size_t i = range.begin(); i < range.end(); ++i) lowest = std::min(lowest, x[i]);
        return lowest;
      },
      [](float a, float b) { return std::min(a, b); });
}

// Each row summed by one task in column order: the reference's bits.
void shifted_row_sums(dense_view<const float> x, float shift, std::span<double> sums) {
  for_each_row(x.rows, [&](const tbb::blocked_range<std::int64_t>& range) {
    for (std::int64_t r = range.begin(); r < range.end(); ++r) {
      double sum = 0;
      for (const float v : x.row(r)) sum += static_cast<double>(v - shift);
      sums[static_cast<std::size_t>(r)] = sum;
    }
  });
}

void shift_and_divide_rows(dense_view<float> rows, float shift, std::span<const float> divisors,
                           const vertex_t* ids) {
  for_each_row(rows.rows, [&](const tbb::blocked_range<std::int64_t>& range) {
    for (std::int64_t i = range.begin(); i < range.end(); ++i) {
      const auto vertex = ids != nullptr ? ids[i] : i;
      const float divisor = divisors[static_cast<std::size_t>(vertex)];
      for (float& v : rows.row(i)) v = (v - shift) / divisor;
    }
  });
}

}  // namespace bulkgnn::kernels::cpu
