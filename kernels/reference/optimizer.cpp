#include "kernels.hpp"

namespace bulkgnn::kernels::reference {

void adam_step(const adam_constants& constants, std::span<float> parameters,
               std::span<const float> gradients, std::span<float> m, std::span<float> v) {
  for (std::size_t i = 0; i < parameters.size(); ++i)
    rules::adam_update(constants, parameters[i], gradients[i], m[i], v[i]);
}

}  // namespace bulkgnn::kernels::reference
