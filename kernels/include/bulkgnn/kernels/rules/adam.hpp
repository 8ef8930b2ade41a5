#pragma once

#include <cmath>

#include "bulkgnn/core/host_device.hpp"

// One torch.optim.Adam update of one parameter (L2 weight decay added to the
// gradient, not AdamW).
namespace bulkgnn::kernels::rules {

// The step's scalars, computed once per step in double as torch computes its
// Python floats, then used as float in the tensor arithmetic.
struct adam_constants {
  float one_minus_beta1;
  float beta2;
  float one_minus_beta2;
  float eps;
  float weight_decay;
  float step_size;              // lr / (1 − β1^t)
  float bias_correction2_sqrt;  // √(1 − β2^t)
};

// The first moment follows torch's lerp for weight < 0.5: m + w·(g − m).
BULKGNN_HOST_DEVICE inline void adam_update(const adam_constants& c, float& parameter,
                                            float gradient, float& m, float& v) {
  const float grad = gradient + c.weight_decay * parameter;
  m = m + c.one_minus_beta1 * (grad - m);
  v = c.beta2 * v + c.one_minus_beta2 * grad * grad;
  const float denom = sqrtf(v) / c.bias_correction2_sqrt + c.eps;
  parameter -= c.step_size * (m / denom);
}

}  // namespace bulkgnn::kernels::rules
