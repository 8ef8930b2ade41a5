#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <random>
#include <span>
#include <vector>

#include "bulkgnn/core/csr.hpp"
#include "bulkgnn/core/dense.hpp"
#include "bulkgnn/core/executor.hpp"
#include "bulkgnn/core/segmented.hpp"

namespace bulkgnn::kernels::testing {

inline const executor reference_exec{backend::reference};
inline const executor cpu_exec{backend::cpu};

// An owning row-major float matrix for the dense kernels' tests.
struct dense_matrix {
  std::int64_t rows = 0;
  std::int64_t cols = 0;
  std::vector<float> data;

  dense_matrix() = default;
  dense_matrix(std::int64_t r, std::int64_t c, float fill = 0.0f)
      : rows(r), cols(c), data(static_cast<std::size_t>(r * c), fill) {}
  [[nodiscard]] dense_view<float> view() { return {rows, cols, data}; }
  [[nodiscard]] dense_view<const float> view() const { return {rows, cols, data}; }
  // The mutable view, by a name that reads as an output at a call.
  [[nodiscard]] dense_view<float> mut() { return view(); }
  [[nodiscard]] float at(std::int64_t r, std::int64_t c) const {
    return data[static_cast<std::size_t>(r * cols + c)];
  }
};

inline dense_matrix random_dense(std::mt19937_64& gen, std::int64_t rows, std::int64_t cols,
                                 float low = -1.0f, float high = 1.0f) {
  dense_matrix m(rows, cols);
  std::uniform_real_distribution<float> value(low, high);
  for (float& v : m.data) v = value(gen);
  return m;
}

// How far C = alpha·op(A)·op(B) + beta·C computed in float, in any order
// of summation, may lie from the real result, element by element (Higham,
// Accuracy and Stability of Numerical Algorithms, §3.1): γ_{K+2}·(|alpha|·
// Σ_p |op(A)[i][p]·op(B)[p][j]| + |beta·C[i][j]|), γ_n = n·u / (1 − n·u),
// u = 2^-24; K + 2 covers the products' sum, the scaling by alpha and the
// fma with beta·C. Two such results (the exact GEMM and cuBLAS) differ by at
// most twice this.
inline std::vector<double> gemm_rounding_bounds(bool transpose_a, bool transpose_b, float alpha,
                                                const dense_matrix& a, const dense_matrix& b,
                                                float beta, const dense_matrix& c) {
  const std::int64_t k = transpose_a ? a.rows : a.cols;
  const double u = std::ldexp(1.0, -24);
  const double n = static_cast<double>(k + 2);
  const double gamma = n * u / (1.0 - n * u);
  std::vector<double> bounds(c.data.size());
  for (std::int64_t i = 0; i < c.rows; ++i) {
    for (std::int64_t j = 0; j < c.cols; ++j) {
      double magnitude = 0.0;
      for (std::int64_t p = 0; p < k; ++p) {
        const float x = transpose_a ? a.at(p, i) : a.at(i, p);
        const float y = transpose_b ? b.at(j, p) : b.at(p, j);
        magnitude += std::abs(static_cast<double>(x) * y);
      }
      const double kept = beta == 0.0f ? 0.0 : std::abs(static_cast<double>(beta) * c.at(i, j));
      bounds[static_cast<std::size_t>(i * c.cols + j)] =
          gamma * (std::abs(static_cast<double>(alpha)) * magnitude + kept);
    }
  }
  return bounds;
}

// Equal as bit patterns (so -0 differs from +0), except that any NaN equals
// any NaN: x86 passes an input NaN's payload through arithmetic, while an
// NVIDIA GPU writes the canonical NaN 0x7fffffff (seen on an H100,
// 2026-11-27); no result depends on a payload.
inline bool same_bits(std::span<const float> x, std::span<const float> y) {
  return std::equal(x.begin(), x.end(), y.begin(), y.end(), [](float u, float v) {
    return std::bit_cast<std::uint32_t>(u) == std::bit_cast<std::uint32_t>(v) ||
           (std::isnan(u) && std::isnan(v));
  });
}

struct random_csr_options {
  std::int64_t rows = 50;
  std::int64_t cols = 40;
  // Mean stored entries per row; rows are drawn between 0 and twice this.
  int mean_degree = 5;
  bool weighted = true;
  // Repeated column ids within a row (multigraph edges); rows stay sorted.
  bool repeats = false;
  // Fraction of rows forced empty.
  double empty_rows = 0.1;
};

// A random well-formed CSR matrix with sorted rows.
inline csr_matrix random_csr(std::mt19937_64& gen, const random_csr_options& o) {
  csr_matrix m;
  m.rows = o.rows;
  m.cols = o.cols;
  std::uniform_int_distribution<int> degree(0, 2 * o.mean_degree);
  std::uniform_int_distribution<vertex_t> column(
      0, static_cast<vertex_t>(std::max<std::int64_t>(o.cols - 1, 0)));
  std::uniform_real_distribution<float> value(0.1f, 2.0f);
  std::bernoulli_distribution empty(o.empty_rows);
  for (std::int64_t r = 0; r < o.rows; ++r) {
    std::vector<vertex_t> row;
    const int d = (o.cols == 0 || empty(gen)) ? 0 : degree(gen);
    for (int k = 0; k < d; ++k) row.push_back(column(gen));
    std::sort(row.begin(), row.end());
    if (!o.repeats) row.erase(std::unique(row.begin(), row.end()), row.end());
    m.indices.insert(m.indices.end(), row.begin(), row.end());
    m.indptr.push_back(static_cast<edge_t>(m.indices.size()));
  }
  if (o.weighted)
    for (std::size_t e = 0; e < m.indices.size(); ++e) m.values.push_back(value(gen));
  return m;
}

// One row holding columns 0 .. weights.size()-1 with the given values.
inline csr_matrix single_row(std::vector<float> weights) {
  csr_matrix m;
  m.rows = 1;
  m.cols = static_cast<std::int64_t>(weights.size());
  for (std::size_t e = 0; e < weights.size(); ++e) m.indices.push_back(static_cast<vertex_t>(e));
  m.indptr.push_back(static_cast<edge_t>(weights.size()));
  m.values = std::move(weights);
  return m;
}

inline std::vector<std::vector<double>> to_dense(csr_view m) {
  std::vector<std::vector<double>> d(static_cast<std::size_t>(m.rows),
                                     std::vector<double>(static_cast<std::size_t>(m.cols), 0.0));
  for (std::int64_t r = 0; r < m.rows; ++r) {
    const auto columns = m.row(r);
    for (std::size_t e = 0; e < columns.size(); ++e)
      d[r][columns[e]] += m.weighted() ? m.row_values(r)[e] : 1.0;
  }
  return d;
}

inline std::vector<std::uint32_t> bits(std::span<const float> v) {
  std::vector<std::uint32_t> out(v.size());
  std::transform(v.begin(), v.end(), out.begin(),
                 [](float x) { return std::bit_cast<std::uint32_t>(x); });
  return out;
}

// Same shape, same pattern, same values bit for bit.
inline void expect_identical(const csr_matrix& expected, const csr_matrix& actual) {
  EXPECT_EQ(expected.rows, actual.rows);
  EXPECT_EQ(expected.cols, actual.cols);
  EXPECT_EQ(expected.indptr, actual.indptr);
  EXPECT_EQ(expected.indices, actual.indices);
  EXPECT_EQ(bits(expected.values), bits(actual.values));
}

// Upper alpha = 1e-4 critical value of the chi-square distribution with `df`
// degrees of freedom (Wilson-Hilferty; accurate to a few percent for df >= 2).
inline double chi_square_critical(int df) {
  constexpr double z = 3.7190164854556804;  // standard normal upper 1e-4 quantile
  const double k = df;
  const double t = 1.0 - 2.0 / (9.0 * k) + z * std::sqrt(2.0 / (9.0 * k));
  return k * t * t * t;
}

inline double chi_square(const std::vector<double>& observed, const std::vector<double>& expected) {
  double statistic = 0.0;
  for (std::size_t k = 0; k < observed.size(); ++k)
    statistic += (observed[k] - expected[k]) * (observed[k] - expected[k]) / expected[k];
  return statistic;
}

}  // namespace bulkgnn::kernels::testing
