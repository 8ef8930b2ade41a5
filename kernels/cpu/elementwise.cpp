#include <algorithm>

#include "common.hpp"
#include "kernels.hpp"

namespace bulkgnn::kernels::cpu {

void fill(std::span<float> x, float value) {
  for_pieces(static_cast<std::int64_t>(x.size()), 1, [&](std::int64_t begin, std::int64_t end) {
    std::fill(x.begin() + begin, x.begin() + end, value);
  });
}

void scale(std::span<float> x, float factor) {
  for_pieces(static_cast<std::int64_t>(x.size()), 1, [&](std::int64_t begin, std::int64_t end) {
    for (std::int64_t i = begin; i < end; ++i) x[static_cast<std::size_t>(i)] *= factor;
  });
}

void multiply(std::span<const float> a, std::span<const float> b, std::span<float> out) {
  for_pieces(static_cast<std::int64_t>(out.size()), 1, [&](std::int64_t begin, std::int64_t end) {
    for (std::int64_t i = begin; i < end; ++i) {
      const auto at = static_cast<std::size_t>(i);
      out[at] = a[at] * b[at];
    }
  });
}

}  // namespace bulkgnn::kernels::cpu
