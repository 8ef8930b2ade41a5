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

}  // namespace bulkgnn::trainer::testing
