#pragma once

#include <cstddef>
#include <cstdint>

#include "bulkgnn/core/host_device.hpp"

// LABOR-i's importance sampling (Balin and Çatalyürek, "Layer-Neighbor
// Sampling", NeurIPS 2023, §3.2), the scalar rules every back end shares so
// that they agree bit for bit. Within one minibatch's hop, each reached
// vertex t has an importance π_t and each frontier row s a scale c_s; row s
// keeps its neighbour t with probability p_st = min(1, c_s·π_t), c_s chosen so
// that Σ_t p_st = fanout. Since the rows share t's variate, t is in the
// minibatch with probability min(1, π_t·max_s c_s), and the fixed-point step
// π_t ← π_t·max_s c_s lowers the expected count of distinct vertices.
namespace bulkgnn::kernels::rules {

// "Until converged" stops once a step lowers the expected count of distinct
// vertices by less than this fraction, or after labor_iteration_limit steps.
inline constexpr double labor_tolerance = 1e-3;
inline constexpr std::int64_t labor_iteration_limit = 100;

// c_s of a row with more neighbours than `fanout`, whose neighbours'
// importances are importances[0, count) (all positive, in stored order; a
// span on the host, a look-up through the minibatch's column numbering on a
// GPU): the c with Σ_t min(1, c·π_t) = fanout. The importances saturated at
// c (c·π ≥ 1) count 1 each and the rest share what is left, c = (fanout −
// saturated) / Σ_unsaturated π; starting from no saturation (c = fanout /
// Σ π, below the answer) each pass can only saturate more, so passes repeat
// until the saturated count stands (a few, at most one per entry). Sums run
// in stored order; no sort.
template <class Importances>
BULKGNN_HOST_DEVICE double labor_row_scale(const Importances& importances, std::size_t count,
                                           std::int64_t fanout) {
  const auto k = static_cast<double>(fanout);
  double total = 0.0;
  for (std::size_t i = 0; i < count; ++i) total += importances[i];
  double c = k / total;
  std::size_t saturated = 0;
  for (std::size_t pass = 0; pass <= count; ++pass) {
    std::size_t now_saturated = 0;
    double rest = 0.0;
    for (std::size_t i = 0; i < count; ++i) {
      const double p = importances[i];
      if (c * p >= 1.0)
        ++now_saturated;
      else
        rest += p;
    }
    if (now_saturated == saturated || rest == 0.0) break;
    saturated = now_saturated;
    c = (k - static_cast<double>(saturated)) / rest;
  }
  return c;
}

// The scale of a row that keeps every neighbour (no more than `fanout`): the
// smallest that saturates them all, so that the importance step counts its
// neighbours as certain. `count` is positive.
template <class Importances>
BULKGNN_HOST_DEVICE double labor_whole_row_scale(const Importances& importances,
                                                 std::size_t count) {
  double smallest = importances[0];
  for (std::size_t i = 1; i < count; ++i)
    if (importances[i] < smallest) smallest = importances[i];
  return 1.0 / smallest;
}

// Whether a row of scale c keeps a neighbour of importance π whose shared
// variate is r (uniform in (0, 1)).
BULKGNN_HOST_DEVICE inline bool labor_keeps(double variate, double scale, double importance) {
  return variate < scale * importance;
}

// The Horvitz–Thompson weight of a kept entry, 1 / p_st: Σ over the kept
// neighbours of weight·x_t is an unbiased estimate of Σ_t x_t.
BULKGNN_HOST_DEVICE inline float labor_weight(double scale, double importance) {
  const double p = scale * importance;
  return static_cast<float>(1.0 / (p < 1.0 ? p : 1.0));
}

}  // namespace bulkgnn::kernels::rules
