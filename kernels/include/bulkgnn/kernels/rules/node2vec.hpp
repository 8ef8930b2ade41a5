#pragma once

#include <cstdint>

#include "bulkgnn/core/host_device.hpp"
#include "bulkgnn/core/rng.hpp"
#include "bulkgnn/core/types.hpp"

// One node2vec walk (Grover & Leskovec, KDD 2016), written for one thread
// alone so that every back end runs the same code: the same variates in the
// same order, and the same decisions on them.
namespace bulkgnn::kernels::rules {

// Whether `x` is in the sorted row [first, last) of indices.
BULKGNN_HOST_DEVICE inline bool row_holds(const vertex_t* indices, edge_t first, edge_t last,
                                          vertex_t x) {
  const edge_t end = last;
  while (first < last) {
    const edge_t middle = first + (last - first) / 2;
    if (indices[middle] < x) {
      first = middle + 1;
    } else {
      last = middle;
    }
  }
  return first < end && indices[first] == x;
}

// out[0, length] = the walk from `start`: out[0] = start; the first step is a
// uniform neighbour; from v, having come from t, neighbour x is taken with
// weight 1/p if x == t, 1 if x is a neighbour of t, 1/q otherwise (the
// inverse CDF over the weights summed in double in stored order). At a vertex
// without neighbours the walk stays: the rest of out repeats it, as
// torch_cluster's random_walk does. Neighbours are the
// entries of a vertex's row (sorted ascending), indptr relative to
// indptr[0] = 0.
BULKGNN_HOST_DEVICE inline void node2vec_walk(const edge_t* indptr, const vertex_t* indices,
                                              vertex_t start, std::int64_t length, double p,
                                              double q, philox_stream& rng, vertex_t* out) {
  out[0] = start;
  vertex_t previous = -1;
  vertex_t current = start;
  for (std::int64_t step = 1; step <= length; ++step) {
    const edge_t first = indptr[current];
    const auto degree = static_cast<std::uint32_t>(indptr[current + 1] - first);
    if (degree == 0) {  // a dead end: the walk stays, as torch_cluster's does
      for (; step <= length; ++step) out[step] = current;
      return;
    }
    vertex_t next = 0;
    if (previous < 0 || (p == 1.0 && q == 1.0)) {
      next = indices[first + rng.uniform_below(degree)];
    } else {
      const edge_t back_first = indptr[previous];
      const edge_t back_last = indptr[previous + 1];
      const auto weight = [&](vertex_t x) {
        if (x == previous) return 1.0 / p;
        return row_holds(indices, back_first, back_last, x) ? 1.0 : 1.0 / q;
      };
      double total = 0.0;
      for (std::uint32_t e = 0; e < degree; ++e) total += weight(indices[first + e]);
      const double target = rng.uniform_open01() * total;
      double sum = 0.0;
      next = indices[first + degree - 1];  // where rounding pushes the target past the end
      for (std::uint32_t e = 0; e < degree; ++e) {
        sum += weight(indices[first + e]);
        if (target < sum) {
          next = indices[first + e];
          break;
        }
      }
    }
    out[step] = next;
    previous = current;
    current = next;
  }
}

}  // namespace bulkgnn::kernels::rules
