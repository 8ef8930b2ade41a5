#include "bulkgnn/trainer/adam.hpp"

#include "bulkgnn/core/error.hpp"
#include "bulkgnn/kernels/elementwise.hpp"
#include "bulkgnn/kernels/optimizer.hpp"

#include <cmath>

namespace bulkgnn::trainer {

void validate(const adam_options& o) {
  BULKGNN_EXPECTS(std::isfinite(o.lr) && o.lr > 0.0f,
                  "adam_options.lr: {} must be finite and positive", o.lr);
  BULKGNN_EXPECTS(std::isfinite(o.weight_decay) && o.weight_decay >= 0.0f,
                  "adam_options.weight_decay: {} must be finite and non-negative", o.weight_decay);
  BULKGNN_EXPECTS(o.beta1 >= 0.0f && o.beta1 < 1.0f, "adam: beta1 = {} is outside [0, 1)", o.beta1);
  BULKGNN_EXPECTS(o.beta2 >= 0.0f && o.beta2 < 1.0f, "adam: beta2 = {} is outside [0, 1)", o.beta2);
  BULKGNN_EXPECTS(std::isfinite(o.eps) && o.eps > 0.0f, "adam: eps = {} must be positive", o.eps);
}

adam::adam(std::size_t parameters, adam_options options, executor exec)
    : options_(options),
      exec_(exec),
      m_(parameters, exec_.memory()),
      v_(parameters, exec_.memory()) {
  validate(options_);
  kernels::fill(exec_, m_, 0.0f);
  kernels::fill(exec_, v_, 0.0f);
}

std::vector<float> adam::first_moment_on_host() const { return copy_to_host(m_).to_vector(); }

std::vector<float> adam::second_moment_on_host() const { return copy_to_host(v_).to_vector(); }

void adam::set_moments(std::span<const float> first, std::span<const float> second) {
  BULKGNN_EXPECTS(first.size() == m_.size() && second.size() == v_.size(),
                  "adam::set_moments: {} first and {} second moments for an optimiser of {}",
                  first.size(), second.size(), m_.size());
  exec_.memory().copy(m_.data(), first.data(), first.size_bytes());
  exec_.memory().copy(v_.data(), second.data(), second.size_bytes());
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
  const auto constants = kernels::adam_constants_for(options_, steps_);
  kernels::adam_step(exec_, constants, parameters, gradients, m_, v_);
}

}  // namespace bulkgnn::trainer
