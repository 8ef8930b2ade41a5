#include "bulkgnn/kernels/optimizer.hpp"

#include <cmath>

#include "../cpu/kernels.hpp"
#include "../cuda/kernels.hpp"
#include "../reference/kernels.hpp"
#include "front_door.hpp"

namespace bulkgnn::kernels {

adam_constants adam_constants_for(const adam_hyperparameters& h, std::int64_t step) {
  BULKGNN_EXPECTS(step >= 1, "adam_constants_for: step = {} must be at least 1", step);
  const double beta1 = h.beta1;
  const double beta2 = h.beta2;
  const double t = static_cast<double>(step);
  return {.one_minus_beta1 = static_cast<float>(1.0 - beta1),
          .beta2 = h.beta2,
          .one_minus_beta2 = static_cast<float>(1.0 - beta2),
          .eps = h.eps,
          .weight_decay = h.weight_decay,
          .step_size = static_cast<float>(h.lr / (1.0 - std::pow(beta1, t))),
          .bias_correction2_sqrt = static_cast<float>(std::sqrt(1.0 - std::pow(beta2, t)))};
}

void adam_step(const executor& exec, const adam_constants& c, std::span<float> parameters,
               std::span<const float> gradients, std::span<float> m, std::span<float> v) {
  BULKGNN_EXPECTS(gradients.size() == parameters.size() && m.size() == parameters.size() &&
                      v.size() == parameters.size(),
                  "adam_step: {} parameters, {} gradients, {} first and {} second moments",
                  parameters.size(), gradients.size(), m.size(), v.size());
  for (const float x : {c.one_minus_beta1, c.beta2, c.one_minus_beta2, c.eps, c.weight_decay,
                        c.step_size, c.bias_correction2_sqrt})
    BULKGNN_EXPECTS(std::isfinite(x), "adam_step: constants hold {}, not finite", x);
  detail::check_disjoint(gradients, parameters, "adam_step", "gradients", "parameters");
  detail::check_disjoint(m, parameters, "adam_step", "m", "parameters");
  detail::check_disjoint(v, parameters, "adam_step", "v", "parameters");
  detail::check_disjoint(m, v, "adam_step", "m", "v");
  detail::check_disjoint(gradients, m, "adam_step", "gradients", "m");
  detail::check_disjoint(gradients, v, "adam_step", "gradients", "v");
  (void)detail::span_reachable(exec, parameters.data(), "adam_step", "parameters");
  (void)detail::span_reachable(exec, gradients.data(), "adam_step", "gradients");
  (void)detail::span_reachable(exec, m.data(), "adam_step", "m");
  (void)detail::span_reachable(exec, v.data(), "adam_step", "v");
  detail::dispatch(
      exec, "adam_step", [&] { reference::adam_step(c, parameters, gradients, m, v); },
      [&] { cpu::adam_step(c, parameters, gradients, m, v); },
      [&] { cuda::adam_step(exec, c, parameters, gradients, m, v); });
}

}  // namespace bulkgnn::kernels
