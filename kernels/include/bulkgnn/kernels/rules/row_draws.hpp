#pragma once

#include <cstdint>

#include "bulkgnn/core/host_device.hpp"
#include "bulkgnn/core/rng.hpp"

// The positions one row of sample_rows draws from its Philox stream, written
// for one thread alone (no scratch beyond the output and, for weighted draws,
// `fanout` doubles), so that a CUDA thread per row and the tests on the host
// run the same code. Each gives exactly the positions the reference back end
// draws, ascending: the same variates in the same order, and the same
// decisions on them.
namespace bulkgnn::kernels::rules {

// Sorts out[0, n) ascending; n is a fanout, so insertion sort.
template <class T>
BULKGNN_HOST_DEVICE inline void sort_ascending(T* out, std::uint32_t n) {
  for (std::uint32_t i = 1; i < n; ++i) {
    const T x = out[i];
    std::uint32_t j = i;
    for (; j > 0 && x < out[j - 1]; --j) out[j] = out[j - 1];
    out[j] = x;
  }
}

// Floyd's algorithm: a uniform s-subset of [0, degree) from exactly s draws
// (0 < s < degree), membership checked by scanning the picks so far.
BULKGNN_HOST_DEVICE inline void floyd_positions(philox_stream& rng, std::uint32_t degree,
                                                std::uint32_t s, std::uint32_t* out) {
  std::uint32_t picked = 0;
  for (std::uint32_t j = degree - s; j < degree; ++j) {
    const std::uint32_t t = rng.uniform_below(j + 1);
    bool taken = false;
    for (std::uint32_t k = 0; k < picked; ++k) taken |= out[k] == t;
    // Every earlier pick is below j, so j is never taken already.
    out[picked++] = taken ? j : t;
  }
  sort_ascending(out, s);
}

// s uniform draws with replacement from [0, degree).
BULKGNN_HOST_DEVICE inline void uniform_positions(philox_stream& rng, std::uint32_t degree,
                                                  std::uint32_t s, std::uint32_t* out) {
  for (std::uint32_t k = 0; k < s; ++k) out[k] = rng.uniform_below(degree);
  sort_ascending(out, s);
}

// s draws with replacement proportional to weights[0, degree): the inverse
// CDF over prefix sums in double, summed in stored order; a target that
// rounding pushes past the last prefix takes the last position. The targets
// are sorted first so one sweep over the prefix sums answers them all.
BULKGNN_HOST_DEVICE inline void weighted_positions(philox_stream& rng, const float* weights,
                                                   std::uint32_t degree, std::uint32_t s,
                                                   double* targets, std::uint32_t* out) {
  double total = 0.0;
  for (std::uint32_t e = 0; e < degree; ++e) total += weights[e];
  for (std::uint32_t k = 0; k < s; ++k) targets[k] = rng.uniform_open01() * total;
  sort_ascending(targets, s);
  std::uint32_t e = 0;
  double prefix = 0.0 + weights[0];
  for (std::uint32_t k = 0; k < s; ++k) {
    while (e + 1 < degree && !(prefix > targets[k])) prefix += weights[++e];
    out[k] = e;
  }
}

// Successive sampling without replacement: the s entries of smallest
// (E / weight, position), E the entry's exponential variate in stored order
// (0 < s < degree). keys[0, s) and out[0, s) hold a max-heap of the best so
// far, ordered by (key, position).
BULKGNN_HOST_DEVICE inline void smallest_key_positions(philox_stream& rng, const float* weights,
                                                       std::uint32_t degree, std::uint32_t s,
                                                       double* keys, std::uint32_t* out) {
  const auto before = [&](std::uint32_t a, std::uint32_t b) {
    return keys[a] < keys[b] || (keys[a] == keys[b] && out[a] < out[b]);
  };
  const auto swap = [&](std::uint32_t a, std::uint32_t b) {
    const double key = keys[a];
    keys[a] = keys[b];
    keys[b] = key;
    const std::uint32_t position = out[a];
    out[a] = out[b];
    out[b] = position;
  };
  for (std::uint32_t e = 0; e < degree; ++e) {
    const double key = rng.exponential() / static_cast<double>(weights[e]);
    std::uint32_t at = 0;
    if (e < s) {
      at = e;
      keys[at] = key;
      out[at] = e;
      while (at > 0 && before((at - 1) / 2, at)) {
        swap(at, (at - 1) / 2);
        at = (at - 1) / 2;
      }
      continue;
    }
    // Later positions lose ties, so only a strictly smaller key enters.
    if (!(key < keys[0])) continue;
    keys[0] = key;
    out[0] = e;
    for (;;) {
      const std::uint32_t left = 2 * at + 1;
      const std::uint32_t right = left + 1;
      std::uint32_t largest = at;
      if (left < s && before(largest, left)) largest = left;
      if (right < s && before(largest, right)) largest = right;
      if (largest == at) break;
      swap(at, largest);
      at = largest;
    }
  }
  sort_ascending(out, s);
}

}  // namespace bulkgnn::kernels::rules
