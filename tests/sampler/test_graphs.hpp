#pragma once

#include "bulkgnn/core/csr.hpp"
#include "bulkgnn/core/rng.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <numeric>
#include <set>
#include <span>
#include <vector>

namespace bulkgnn::testing {

// Upper 0.9999 quantile of chi-square with k degrees of freedom
// (Wilson-Hilferty), so a correct sampler fails about once in 10^4 seeds.
inline double chi_square_critical(int k) {
  const double z = 3.719;
  const double a = 2.0 / (9.0 * k);
  return k * std::pow(1 - a + z * std::sqrt(a), 3);
}

// Pearson's statistic with the cells of expected count below 5 pooled into
// one, so that the chi-square approximation holds, and its degrees of
// freedom (cells - 1: the counts' total is fixed, as in a multinomial).
struct pearson_test {
  double statistic = 0;
  int degrees = 0;
};

inline pearson_test pearson_pooled(const std::vector<double>& observed,
                                   const std::vector<double>& expected) {
  double statistic = 0, pooled_observed = 0, pooled_expected = 0;
  int cells = 0;
  for (std::size_t i = 0; i < observed.size(); ++i) {
    if (expected[i] < 5) {
      pooled_observed += observed[i];
      pooled_expected += expected[i];
      continue;
    }
    statistic += (observed[i] - expected[i]) * (observed[i] - expected[i]) / expected[i];
    ++cells;
  }
  if (pooled_expected > 0) {
    const double gap = pooled_observed - pooled_expected;
    statistic += gap * gap / pooled_expected;
    ++cells;
  }
  return {statistic, cells - 1};
}

// A random graph with a skewed degree distribution (some rows empty, a few
// far above any fanout), sorted rows, no duplicates.
inline csr_matrix random_graph(vertex_t n, std::uint32_t seed, int max_degree = 60) {
  csr_matrix g;
  g.rows = g.cols = n;
  philox_stream rng(rng_key{seed, 0, 0, 0, 0});
  for (vertex_t v = 0; v < n; ++v) {
    const auto roll = rng.uniform_below(100);
    const int degree = roll < 5    ? 0
                       : roll < 90 ? static_cast<int>(rng.uniform_below(12))
                                   : static_cast<int>(rng.uniform_below(max_degree));
    std::set<vertex_t> neighbours;
    while (static_cast<int>(neighbours.size()) < std::min<int>(degree, n - 1)) {
      const auto u = static_cast<vertex_t>(rng.uniform_below(n));
      if (u != v) neighbours.insert(u);
    }
    g.indices.insert(g.indices.end(), neighbours.begin(), neighbours.end());
    g.indptr.push_back(static_cast<edge_t>(g.indices.size()));
  }
  return g;
}

// 0, 1, ..., n - 1: every vertex as a seed.
inline std::vector<vertex_t> all_vertices(vertex_t n) {
  std::vector<vertex_t> v(n);
  std::iota(v.begin(), v.end(), 0);
  return v;
}

inline bool has_edge(csr_view g, vertex_t dst, vertex_t src) {
  const auto row = g.row(dst);
  return std::binary_search(row.begin(), row.end(), src);
}

// A graph whose rows all hold exactly `degree` distinct neighbours, none the
// row itself, sorted: every destination draws from the same positions, so
// inclusion counts pool over destinations and equal draws are comparable.
inline csr_matrix regular_graph(vertex_t n, int degree, std::uint32_t seed) {
  csr_matrix g;
  g.rows = g.cols = n;
  philox_stream rng(rng_key{seed, 0, 0, 0, 0});
  for (vertex_t v = 0; v < n; ++v) {
    std::set<vertex_t> row;
    while (static_cast<int>(row.size()) < degree) {
      const auto u = static_cast<vertex_t>(rng.uniform_below(static_cast<std::uint32_t>(n)));
      if (u != v) row.insert(u);
    }
    g.indices.insert(g.indices.end(), row.begin(), row.end());
    g.indptr.push_back(static_cast<edge_t>(g.indices.size()));
  }
  return g;
}

// LADIES' column distribution for one frontier, from the definition:
// p(v) ∝ Σ_{u∈F} Â(u,v)², Â = D̃⁻¹(A + I).
inline std::map<vertex_t, double> ladies_distribution(csr_view g,
                                                      std::span<const vertex_t> frontier) {
  std::map<vertex_t, double> p;
  double total = 0;
  for (auto u : frontier) {
    const double w = 1.0 / std::pow(static_cast<double>(g.degree(u)) + 1.0, 2);
    for (auto v : g.row(u)) p[v] += w;
    p[u] += w;
    total += w * static_cast<double>(g.degree(u) + 1);
  }
  for (auto& [v, q] : p) q /= total;
  return p;
}

// The brute-force model of a subgraph sampler's minibatch: `layers` blocks
// on A[V, V], V = `vertices` (the seeds, its first `seeds`, first), the
// seeds' layer holding the seeds' rows and every other block all rows; each
// row's entries in ascending local column, repeats in A's stored order.
inline std::vector<csr_matrix> induced_blocks(csr_view g, std::span<const vertex_t> vertices,
                                              std::size_t seeds, std::size_t layers) {
  std::map<vertex_t, vertex_t> local;
  for (std::size_t i = 0; i < vertices.size(); ++i)
    local.emplace(vertices[i], static_cast<vertex_t>(i));
  const auto induced_rows = [&](std::size_t rows) {
    csr_matrix block;
    block.rows = static_cast<std::int64_t>(rows);
    block.cols = static_cast<std::int64_t>(vertices.size());
    for (std::size_t r = 0; r < rows; ++r) {
      std::vector<vertex_t> row;
      for (const vertex_t t : g.row(vertices[r]))
        if (const auto found = local.find(t); found != local.end()) row.push_back(found->second);
      std::stable_sort(row.begin(), row.end());
      block.indices.insert(block.indices.end(), row.begin(), row.end());
      block.indptr.push_back(static_cast<edge_t>(block.indices.size()));
    }
    return block;
  };
  std::vector<csr_matrix> blocks;
  for (std::size_t b = 0; b + 1 < layers; ++b) blocks.push_back(induced_rows(vertices.size()));
  blocks.push_back(induced_rows(seeds));
  return blocks;
}

}  // namespace bulkgnn::testing
