#include "kernels.hpp"

namespace bulkgnn::kernels::reference {

void fill(std::span<float> x, float value) {
  for (float& v : x) v = value;
}

void scale(std::span<float> x, float factor) {
  for (float& v : x) v *= factor;
}

void multiply(std::span<const float> a, std::span<const float> b, std::span<float> out) {
  for (std::size_t i = 0; i < out.size(); ++i) out[i] = a[i] * b[i];
}

}  // namespace bulkgnn::kernels::reference
