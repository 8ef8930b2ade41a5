#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <numeric>
#include <random>
#include <span>
#include <string>
#include <vector>

#include "bulkgnn/core/csr.hpp"
#include "bulkgnn/core/executor.hpp"
#include "bulkgnn/trainer/layers.hpp"
#include "bulkgnn/trainer/matrix.hpp"
#include "gradient_check.hpp"

namespace bulkgnn::trainer::testing {

inline const executor cpu_exec{backend::cpu};

inline matrix random_matrix(std::mt19937_64& gen, std::int64_t rows, std::int64_t cols,
                            float low = -1.0f, float high = 1.0f) {
  matrix m(rows, cols);
  std::uniform_real_distribution<float> value(low, high);
  for (float& v : m.data()) v = value(gen);
  return m;
}

// A sampled block: `rows` destinations (the first `rows` sources), `cols`
// sources, up to max_degree distinct sorted sources per row, some rows empty.
// LADIES-like when weighted: every row holds its own destination (the self
// loop) and positive weights summing to 1.
inline csr_matrix random_block(std::mt19937_64& gen, std::int64_t rows, std::int64_t cols,
                               int max_degree, bool weighted) {
  csr_matrix m;
  m.rows = rows;
  m.cols = cols;
  std::uniform_int_distribution<int> degree(0, max_degree);
  std::uniform_int_distribution<vertex_t> column(0, static_cast<vertex_t>(cols - 1));
  std::uniform_real_distribution<float> value(0.1f, 1.0f);
  for (std::int64_t r = 0; r < rows; ++r) {
    std::vector<vertex_t> row;
    if (weighted) row.push_back(static_cast<vertex_t>(r));
    for (int k = degree(gen); k > 0; --k) row.push_back(column(gen));
    std::sort(row.begin(), row.end());
    row.erase(std::unique(row.begin(), row.end()), row.end());
    m.indices.insert(m.indices.end(), row.begin(), row.end());
    m.indptr.push_back(static_cast<edge_t>(m.indices.size()));
    if (!weighted) continue;
    std::vector<float> w(row.size());
    for (float& x : w) x = value(gen);
    const float sum = std::accumulate(w.begin(), w.end(), 0.0f);
    for (float x : w) m.values.push_back(x / sum);
  }
  return m;
}

// Blocks in DGL order for node counts sizes[0] (inputs) ... sizes.back()
// (seeds): block l maps sizes[l] sources to sizes[l + 1] destinations.
inline std::vector<aggregation_block> random_blocks(std::mt19937_64& gen,
                                                    std::vector<std::int64_t> sizes,
                                                    layer_kind kind, int max_degree = 4) {
  std::vector<aggregation_block> blocks;
  for (std::size_t l = 0; l + 1 < sizes.size(); ++l)
    blocks.push_back(make_aggregation_block(
        cpu_exec, random_block(gen, sizes[l + 1], sizes[l], max_degree, kind == layer_kind::gcn),
        kind, true));
  return blocks;
}

// Σ weights ⊙ m in double: a scalar loss whose gradient with respect to m
// is `weights`.
inline double projection(dense_view<const float> m, const matrix& weights) {
  double sum = 0.0;
  for (std::size_t i = 0; i < m.data.size(); ++i)
    sum += static_cast<double>(m.data[i]) * static_cast<double>(weights.data()[i]);
  return sum;
}

using bulkgnn::testing::check_gradient;
using bulkgnn::testing::expect_gradient_matches;
using bulkgnn::testing::gradient_check;
using bulkgnn::testing::gradient_tolerance;
using bulkgnn::testing::sample_indices;

}  // namespace bulkgnn::trainer::testing
