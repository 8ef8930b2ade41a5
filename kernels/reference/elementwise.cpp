#include "kernels.hpp"

namespace bulkgnn::kernels::reference {

void fill(std::span<float> x, float value) {
  for (float& v : x) v = value;
}

void scale(std::span<float> x, float factor) {
  for (float& v : x) v *= factor;
}

}  // namespace bulkgnn::kernels::reference
