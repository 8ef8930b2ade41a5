#include "bulkgnn/trainer/adam.hpp"

#include "bulkgnn/core/error.hpp"

#include <cmath>

#include "elementwise.hpp"

namespace bulkgnn::trainer {

namespace {

struct step_constants {
  float one_minus_beta1;
  float beta2;
  float one_minus_beta2;
  float eps;
  float weight_decay;
  float step_size;              // lr / (1 − β1^t)
  float bias_correction2_sqrt;  // √(1 − β2^t)
};

// The first moment follows torch's lerp for weight < 0.5: m + w·(g − m).
void update(const step_constants& c, float* p, const float* g, float* m, float* v,
            std::int64_t begin, std::int64_t end) {
  for (std::int64_t i = begin; i < end; ++i) {
    const float grad = g[i] + c.weight_decay * p[i];
    m[i] = m[i] + c.one_minus_beta1 * (grad - m[i]);
    v[i] = c.beta2 * v[i] + c.one_minus_beta2 * grad * grad;
    const float denom = std::sqrt(v[i]) / c.bias_correction2_sqrt + c.eps;
    p[i] -= c.step_size * (m[i] / denom);
  }
}

}  // namespace

void validate(const adam_options& o) {
  BULKGNN_EXPECTS(std::isfinite(o.lr) && o.lr > 0.0f, "--lr: {} must be finite and positive", o.lr);
  BULKGNN_EXPECTS(std::isfinite(o.weight_decay) && o.weight_decay >= 0.0f,
                  "--weight-decay: {} must be finite and non-negative", o.weight_decay);
  BULKGNN_EXPECTS(o.beta1 >= 0.0f && o.beta1 < 1.0f, "adam: beta1 = {} is outside [0, 1)", o.beta1);
  BULKGNN_EXPECTS(o.beta2 >= 0.0f && o.beta2 < 1.0f, "adam: beta2 = {} is outside [0, 1)", o.beta2);
  BULKGNN_EXPECTS(std::isfinite(o.eps) && o.eps > 0.0f, "adam: eps = {} must be positive", o.eps);
}

adam::adam(std::size_t parameters, adam_options options)
    : options_(options), m_(parameters, 0.0f), v_(parameters, 0.0f) {
  validate(options_);
}

void adam::set_steps(std::int64_t steps) {
  BULKGNN_EXPECTS(steps >= 0, "adam::set_steps: {} steps", steps);
  steps_ = steps;
}

void adam::step(std::span<float> parameters, std::span<const float> gradients) {
  BULKGNN_EXPECTS(parameters.size() == m_.size() && gradients.size() == m_.size(),
                  "adam::step: {} parameters and {} gradients for an optimiser of {}",
                  parameters.size(), gradients.size(), m_.size());
  ++steps_;
  // Like torch, scalars are computed in double (Python floats), then used as
  // float in the tensor arithmetic.
  const double beta1 = options_.beta1;
  const double beta2 = options_.beta2;
  const double t = static_cast<double>(steps_);
  const step_constants c{
      .one_minus_beta1 = static_cast<float>(1.0 - beta1),
      .beta2 = options_.beta2,
      .one_minus_beta2 = static_cast<float>(1.0 - beta2),
      .eps = options_.eps,
      .weight_decay = options_.weight_decay,
      .step_size = static_cast<float>(options_.lr / (1.0 - std::pow(beta1, t))),
      .bias_correction2_sqrt = static_cast<float>(std::sqrt(1.0 - std::pow(beta2, t)))};
  detail::for_pieces(
      static_cast<std::int64_t>(m_.size()), 8, [&](std::int64_t begin, std::int64_t end) {
        update(c, parameters.data(), gradients.data(), m_.data(), v_.data(), begin, end);
      });
}

}  // namespace bulkgnn::trainer
