#include "common.hpp"
#include "kernels.hpp"

namespace bulkgnn::kernels::cpu {

void adam_step(const adam_constants& constants, std::span<float> parameters,
               std::span<const float> gradients, std::span<float> m, std::span<float> v) {
  for_pieces(static_cast<std::int64_t>(parameters.size()), 8,
             [&](std::int64_t begin, std::int64_t end) {
               for (std::int64_t i = begin; i < end; ++i)
                 rules::adam_update(constants, parameters[i], gradients[i], m[i], v[i]);
             });
}

}  // namespace bulkgnn::kernels::cpu
