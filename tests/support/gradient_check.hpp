#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <functional>
#include <numeric>
#include <random>
#include <span>
#include <string>
#include <vector>

// Finite-difference checks of analytic gradients, for the trainer's layers
// and the kernels they are built from.
namespace bulkgnn::testing {

struct gradient_tolerance {
  double step = 1e-3;
  double relative = 1e-2;
  double absolute = 1e-4;
};

struct gradient_check {
  int checked = 0;
  // Entries whose loss has a kink (ReLU) within the step, recognised by
  // forward and backward differences that disagree.
  int at_kinks = 0;
  int failed = 0;
  std::string first_failure;
};

// Compares analytic[i] with finite differences of `loss` in values[i] for
// each i in `indices`. Differences are taken over the float values actually
// stored, so the rounding of the step does not count as error. Where the
// forward and backward differences agree, the loss is smooth over the step
// and the gradient must match the central difference. Where they disagree,
// either a kink lies within the step, and the gradient matches the
// one-sided difference of the side the kink is not on, or float noise,
// which the central difference cancels at f(x), made them differ; any of the
// three is accepted there.
inline gradient_check check_gradient(std::span<float> values, std::span<const float> analytic,
                                     std::span<const std::size_t> indices,
                                     const std::function<double()>& loss,
                                     const gradient_tolerance& tolerance = {}) {
  const auto close = [&](double a, double b) {
    return std::abs(a - b) <=
           tolerance.relative * std::max(std::abs(a), std::abs(b)) + tolerance.absolute;
  };
  gradient_check result;
  for (const std::size_t i : indices) {
    const float original = values[i];
    const float up = original + static_cast<float>(tolerance.step);
    const float down = original - static_cast<float>(tolerance.step);
    const double at = loss();
    values[i] = up;
    const double forward = (loss() - at) / (static_cast<double>(up) - original);
    values[i] = down;
    const double backward = (at - loss()) / (original - static_cast<double>(down));
    values[i] = original;
    ++result.checked;
    const bool smooth = close(forward, backward);
    result.at_kinks += smooth ? 0 : 1;
    const bool matches = close((forward + backward) / 2, analytic[i]) ||
                         (!smooth && (close(forward, analytic[i]) || close(backward, analytic[i])));
    if (matches) continue;
    if (result.failed++ == 0)
      result.first_failure = "entry " + std::to_string(i) + ": analytic " +
                             std::to_string(analytic[i]) + ", forward difference " +
                             std::to_string(forward) + ", backward " + std::to_string(backward);
  }
  return result;
}

// Every index below n when n <= count, else `count` distinct ones at random.
inline std::vector<std::size_t> sample_indices(std::mt19937_64& gen, std::size_t n,
                                               std::size_t count) {
  std::vector<std::size_t> all(n);
  std::iota(all.begin(), all.end(), std::size_t{0});
  if (n <= count) return all;
  std::shuffle(all.begin(), all.end(), gen);
  all.resize(count);
  std::sort(all.begin(), all.end());
  return all;
}

inline void expect_gradient_matches(const gradient_check& check, const std::string& what) {
  EXPECT_EQ(check.failed, 0) << what << ": " << check.first_failure;
  EXPECT_GT(check.checked, 0) << what;
}

}  // namespace bulkgnn::testing
