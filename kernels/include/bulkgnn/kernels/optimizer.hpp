#pragma once

#include "bulkgnn/core/executor.hpp"
#include "bulkgnn/kernels/rules/adam.hpp"

#include <cstdint>
#include <span>

namespace bulkgnn::kernels {

using rules::adam_constants;

struct adam_hyperparameters {
  float lr = 0.003f;
  float beta1 = 0.9f;
  float beta2 = 0.999f;
  float eps = 1e-8f;
  float weight_decay = 0.0f;
};

// The scalars of step t (from 1) as torch computes them: in double, then
// rounded to float.
[[nodiscard]] adam_constants adam_constants_for(const adam_hyperparameters& h, std::int64_t step);

// One torch.optim.Adam step over every parameter (rules/adam.hpp): updates
// the parameters and the moments m and v in place. All four spans have the
// same size; gradients must not overlap the others, and the constants must
// be finite.
void adam_step(const executor& exec, const adam_constants& constants, std::span<float> parameters,
               std::span<const float> gradients, std::span<float> m, std::span<float> v);

}  // namespace bulkgnn::kernels
