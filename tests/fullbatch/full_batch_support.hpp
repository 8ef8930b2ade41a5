#pragma once

#include "bulkgnn/core/csr.hpp"
#include "bulkgnn/distributed/partition.hpp"
#include "bulkgnn/fullbatch/grid.hpp"
#include "bulkgnn/fullbatch/normalised_adjacency.hpp"
#include "bulkgnn/trainer/matrix.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <numeric>
#include <random>
#include <vector>

namespace bulkgnn::fullbatch::testing {

// A directed graph with rows of 0 to max_degree random in-neighbours (some
// repeated, some self loops), rows sorted.
inline csr_matrix random_graph(std::int64_t n, int max_degree, std::uint64_t seed) {
  std::mt19937_64 gen(seed);
  std::uniform_int_distribution<int> degree(0, max_degree);
  std::uniform_int_distribution<vertex_t> vertex(0, static_cast<vertex_t>(n - 1));
  csr_matrix g;
  g.rows = n;
  g.cols = n;
  std::vector<edge_t> indptr{0};
  std::vector<vertex_t> indices;
  for (std::int64_t v = 0; v < n; ++v) {
    std::vector<vertex_t> row(static_cast<std::size_t>(degree(gen)));
    for (auto& u : row) u = vertex(gen);
    std::sort(row.begin(), row.end());
    indices.insert(indices.end(), row.begin(), row.end());
    indptr.push_back(static_cast<edge_t>(indices.size()));
  }
  g.indptr = buffer<edge_t>(indptr);
  g.indices = buffer<vertex_t>(indices);
  return g;
}

inline std::vector<vertex_t> every_vertex(std::int64_t n) {
  std::vector<vertex_t> all(static_cast<std::size_t>(n));
  std::iota(all.begin(), all.end(), 0);
  return all;
}

// The whole Â of the identity partition, as the process alone builds it.
inline csr_matrix whole_normalised(csr_view graph, trainer::layer_kind kind) {
  const auto all = every_vertex(graph.rows);
  const auto identity = distributed::block_partition(graph.rows, 1);
  return normalised_rows(graph, all, identity, kind, degrees_with_self_loops(graph, all));
}

// Every grid a world of `ranks` can take, with its replication.
inline std::vector<std::pair<grid_kind, int>> grids_for(int ranks) {
  std::vector<std::pair<grid_kind, int>> grids{{grid_kind::one_d, 1}, {grid_kind::sar, 1}};
  for (int c = 1; c <= ranks; ++c) {
    if (ranks % c != 0) continue;
    if (c > 1) grids.emplace_back(grid_kind::one_and_half_d, c);
    const int layer = ranks / c;
    const auto q = static_cast<int>(std::lround(std::sqrt(layer)));
    if (q * q != layer) continue;
    grids.emplace_back(c == 1 ? grid_kind::two_d : grid_kind::three_d, c);
  }
  return grids;
}

}  // namespace bulkgnn::fullbatch::testing
