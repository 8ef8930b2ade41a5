#pragma once

#include "bulkgnn/core/buffer.hpp"
#include "bulkgnn/core/executor.hpp"
#include "bulkgnn/kernels/optimizer.hpp"

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

namespace bulkgnn::trainer {

// lr, beta1, beta2, eps, weight_decay, with torch's defaults but lr 0.003.
using adam_options = kernels::adam_hyperparameters;

// option_error naming adam_options.lr or adam_options.weight_decay (finite,
// lr > 0, weight decay >= 0), or the beta or eps that is out of range.
void validate(const adam_options& options);

// torch.optim.Adam (not AdamW): L2 weight decay added to the gradient,
// moments updated as torch does (lerp for the first), bias-corrected, eps
// added to √v̂. The update is kernels::adam_step on `exec`; the moments live
// in its memory, next to the parameters.
class adam {
 public:
  adam(std::size_t parameters, adam_options options, executor exec = {});

  void step(std::span<float> parameters, std::span<const float> gradients);

  // Steps taken, for the bias correction; checkpoints save and restore it
  // with the moments.
  [[nodiscard]] std::int64_t steps() const { return steps_; }
  void set_steps(std::int64_t steps);

  // The moments, in the executor's memory.
  [[nodiscard]] std::span<const float> first_moment() const { return {m_.data(), m_.size()}; }
  [[nodiscard]] std::span<const float> second_moment() const { return {v_.data(), v_.size()}; }

  // The moments copied to and from host memory, wherever they live.
  [[nodiscard]] std::vector<float> first_moment_on_host() const;
  [[nodiscard]] std::vector<float> second_moment_on_host() const;
  void set_moments(std::span<const float> first, std::span<const float> second);
  [[nodiscard]] const adam_options& options() const { return options_; }

 private:
  adam_options options_;
  executor exec_;
  std::int64_t steps_ = 0;
  buffer<float> m_;
  buffer<float> v_;
};

}  // namespace bulkgnn::trainer
