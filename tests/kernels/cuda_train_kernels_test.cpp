// The train step's dense kernels on the CUDA back end against the cpu back
// end, bit for bit (label gpu): GEMM, ReLU + dropout, bias, fill and scale,
// softmax cross-entropy (portable exp and log), link scoring's product and
// logistic loss, and Adam.
#include "bulkgnn/core/error.hpp"
#include "bulkgnn/kernels/activation.hpp"
#include "bulkgnn/kernels/bias.hpp"
#include "bulkgnn/kernels/elementwise.hpp"
#include "bulkgnn/kernels/gemm.hpp"
#include "bulkgnn/kernels/loss.hpp"
#include "bulkgnn/kernels/optimizer.hpp"
#include "cuda_fixture.hpp"
#include "test_support.hpp"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cmath>
#include <initializer_list>
#include <limits>
#include <random>
#include <string>
#include <utility>
#include <vector>

namespace bulkgnn::kernels {
namespace {

using testing::cpu_exec;
using testing::dense_matrix;
using testing::random_dense;
using testing::same_bits;

// A dense matrix in device memory.
struct device_matrix {
  std::int64_t rows;
  std::int64_t cols;
  buffer<float> data;

  [[nodiscard]] dense_view<float> view() {
    return {rows, cols, std::span<float>(data), memory_space::device};
  }
  [[nodiscard]] std::vector<float> to_host() const {
    const auto host = copy_to_host(data);
    return {host.begin(), host.end()};
  }
};

class CudaTrainKernels : public testing::CudaKernels {
 protected:
  [[nodiscard]] device_matrix on_gpu(const dense_matrix& m) const {
    return {m.rows, m.cols, copy_to(std::span<const float>(m.data), device())};
  }
  template <class T>
  [[nodiscard]] buffer<T> on_gpu(const std::vector<T>& values) const {
    return copy_to(std::span<const T>(values), device());
  }
};

// Zeros of both signs and a NaN among random values: the rules' edge cases.
dense_matrix with_special_values(std::mt19937_64& gen, std::int64_t rows, std::int64_t cols) {
  auto m = random_dense(gen, rows, cols);
  for (std::size_t i = 0; i < m.data.size(); i += 7) m.data[i] = (i / 7) % 2 ? -0.0f : 0.0f;
  if (!m.data.empty()) m.data[m.data.size() / 2] = std::numeric_limits<float>::quiet_NaN();
  return m;
}

struct gemm_shape {
  std::int64_t m, n, k;
};

// One GEMM to check: its layout and beta, random operands, and a C that holds
// zeros of both signs and a NaN.
struct gemm_case {
  gemm_shape shape;
  gemm_op op_a;
  gemm_op op_b;
  float beta;
  dense_matrix a;
  dense_matrix b;
  dense_matrix c_before;

  [[nodiscard]] std::string name() const {
    return fmt::format("{}x{}x{} op_a {} op_b {} beta {}", shape.m, shape.n, shape.k,
                       static_cast<int>(op_a), static_cast<int>(op_b), beta);
  }
};

// Every layout of each shape with beta 0 (C ignored, NaN included), 1 and
// -0.25.
template <class Check>
void for_each_gemm_case(std::mt19937_64& gen, std::initializer_list<gemm_shape> shapes,
                        Check&& check) {
  for (const auto& shape : shapes) {
    const auto [m, n, k] = shape;
    for (const auto op_a : {gemm_op::plain, gemm_op::transposed}) {
      for (const auto op_b : {gemm_op::plain, gemm_op::transposed}) {
        for (const float beta : {0.0f, 1.0f, -0.25f}) {
          auto a = op_a == gemm_op::plain ? random_dense(gen, m, k) : random_dense(gen, k, m);
          auto b = op_b == gemm_op::plain ? random_dense(gen, k, n) : random_dense(gen, n, k);
          auto c_before = with_special_values(gen, m, n);
          check(
              gemm_case{shape, op_a, op_b, beta, std::move(a), std::move(b), std::move(c_before)});
        }
      }
    }
  }
}

// Small shapes take 16 × 16 tiles; 2000 × 600 takes 64 × 64 ones (320 tiles,
// over twice an H100's or H200's 132 SMs).
TEST_F(CudaTrainKernels, GemmGivesTheCpusBitsForEveryLayoutAndShape) {
  std::mt19937_64 gen(21);
  for_each_gemm_case(
      gen,
      {{1, 1, 1},
       {17, 33, 5},
       {64, 64, 16},
       {130, 70, 257},
       {3, 200, 1000},
       {40, 9, 0},
       {2000, 600, 20}},
      [&](const gemm_case& g) {
        auto expected = g.c_before;
        auto c = on_gpu(g.c_before);
        auto a_there = on_gpu(g.a);
        auto b_there = on_gpu(g.b);
        gemm(cpu_exec, g.op_a, g.op_b, 0.5f, g.a.view(), g.b.view(), g.beta, expected.view());
        gemm(gpu(), g.op_a, g.op_b, 0.5f, a_there.view(), b_there.view(), g.beta, c.view());
        EXPECT_TRUE(same_bits(expected.data, c.to_host())) << g.name();
      });
}

// gemm_mode::fast (cuBLAS) against the exact GEMM: within twice the rounding
// bound of a float GEMM summed in any order (test_support.hpp), NaN where C
// held a NaN that beta keeps, every element written. The weight gradient's
// shape (small C, long K) and the layers' (tall C) are among the shapes.
TEST_F(CudaTrainKernels, CublasGemmLiesWithinTwiceTheRoundingBoundOfTheExactGemm) {
  std::mt19937_64 gen(27);
  for_each_gemm_case(
      gen, {{1, 1, 1}, {17, 33, 5}, {130, 70, 257}, {100, 256, 20000}, {5000, 64, 100}, {40, 9, 0}},
      [&](const gemm_case& g) {
        auto expected = g.c_before;
        gemm(cpu_exec, g.op_a, g.op_b, 0.5f, g.a.view(), g.b.view(), g.beta, expected.view());
        auto c = on_gpu(g.c_before);
        auto a_there = on_gpu(g.a);
        auto b_there = on_gpu(g.b);
        gemm(gpu(), g.op_a, g.op_b, 0.5f, a_there.view(), b_there.view(), g.beta, c.view(),
             gemm_mode::fast);
        const auto actual = c.to_host();
        const auto bounds = testing::gemm_rounding_bounds(g.op_a == gemm_op::transposed,
                                                          g.op_b == gemm_op::transposed, 0.5f, g.a,
                                                          g.b, g.beta, g.c_before);
        int wrong = 0;
        for (std::size_t e = 0; e < actual.size(); ++e) {
          const bool ok =
              std::isnan(expected.data[e])
                  ? std::isnan(actual[e])
                  : std::abs(static_cast<double>(actual[e]) - expected.data[e]) <= 2.0 * bounds[e];
          wrong += ok ? 0 : 1;
        }
        EXPECT_EQ(wrong, 0) << g.name();
      });
}

// The bias gradient through cuBLAS: within twice γ_rows·Σ_r |m[r][j]| of
// the exact column sums (empty columns and no rows included).
TEST_F(CudaTrainKernels, CublasColumnSumsLieWithinTwiceTheRoundingBound) {
  std::mt19937_64 gen(28);
  for (const auto& [rows, cols] :
       {std::pair<std::int64_t, std::int64_t>{0, 5}, {1, 1}, {3000, 70}, {200000, 256}}) {
    const auto m = random_dense(gen, rows, cols);
    std::vector<float> expected(static_cast<std::size_t>(cols));
    column_sums(cpu_exec, m.view(), expected);
    buffer<float> sums(static_cast<std::size_t>(cols), device());
    fill(gpu(), std::span<float>(sums), std::numeric_limits<float>::quiet_NaN());
    auto m_there = on_gpu(m);
    column_sums(gpu(), m_there.view(), std::span<float>(sums), gemm_mode::fast);
    const auto actual = copy_to_host(sums);
    const double u = std::ldexp(1.0, -24);
    const double gamma = static_cast<double>(rows) * u / (1.0 - static_cast<double>(rows) * u);
    for (std::int64_t j = 0; j < cols; ++j) {
      double magnitude = 0.0;
      for (std::int64_t r = 0; r < rows; ++r) magnitude += std::abs(m.at(r, j));
      const auto e = static_cast<std::size_t>(j);
      EXPECT_LE(std::abs(static_cast<double>(actual[e]) - expected[e]), 2.0 * gamma * magnitude)
          << rows << "x" << cols << " column " << j;
    }
  }
}

TEST_F(CudaTrainKernels, ReluDropoutDrawsTheCpusMasks) {
  std::mt19937_64 gen(22);
  for (const std::int64_t cols : {1, 7, 8, 9, 130}) {
    const auto x = with_special_values(gen, 300, cols);
    std::vector<vertex_t> row_ids(300);
    for (std::size_t r = 0; r < row_ids.size(); ++r)
      row_ids[r] = static_cast<vertex_t>((r * 7919) % 100003);
    const auto row_ids_there = on_gpu(row_ids);
    for (const bool by_vertex : {false, true}) {
      const dropout_key host_key{
          .seed = 5,
          .epoch = 2,
          .minibatch = 11,
          .row_ids = by_vertex ? std::span<const vertex_t>(row_ids) : std::span<const vertex_t>()};
      auto device_key = host_key;
      if (by_vertex) device_key.row_ids = std::span<const vertex_t>(row_ids_there);
      auto expected = x;
      auto actual = on_gpu(x);
      relu_dropout(cpu_exec, expected.view(), 0.4f, host_key, 1);
      relu_dropout(gpu(), actual.view(), 0.4f, device_key, 1);
      EXPECT_TRUE(same_bits(expected.data, actual.to_host()))
          << cols << " columns, keyed by " << (by_vertex ? "vertex" : "row");
    }
    auto expected = x;
    auto actual = on_gpu(x);
    relu_dropout(cpu_exec, expected.view(), 0.4f, std::nullopt, 0);
    relu_dropout(gpu(), actual.view(), 0.4f, std::nullopt, 0);
    EXPECT_TRUE(same_bits(expected.data, actual.to_host())) << cols << " columns, relu only";
  }
}

TEST_F(CudaTrainKernels, ReluDropoutBackwardGivesTheCpusBits) {
  std::mt19937_64 gen(23);
  const auto y = with_special_values(gen, 500, 33);
  auto expected = random_dense(gen, 500, 33);
  auto y_there = on_gpu(y);
  auto grad = on_gpu(expected);
  relu_dropout_backward(cpu_exec, y.view(), 0.3f, true, expected.view());
  relu_dropout_backward(gpu(), y_there.view(), 0.3f, true, grad.view());
  EXPECT_TRUE(same_bits(expected.data, grad.to_host()));
}

TEST_F(CudaTrainKernels, BiasRowsAndColumnSumsGiveTheCpusBits) {
  std::mt19937_64 gen(24);
  const auto bias = random_dense(gen, 1, 70);
  dense_matrix expected(3000, 70);
  auto out = on_gpu(expected);
  const auto bias_there = on_gpu(bias.data);
  fill_rows_with_bias(cpu_exec, bias.data, expected.view());
  fill_rows_with_bias(gpu(), std::span<const float>(bias_there), out.view());
  EXPECT_TRUE(same_bits(expected.data, out.to_host()));

  const auto m = with_special_values(gen, 3000, 70);
  std::vector<float> sums(70);
  buffer<float> sums_there(70, device());
  auto m_there = on_gpu(m);
  column_sums(cpu_exec, m.view(), sums);
  column_sums(gpu(), m_there.view(), std::span<float>(sums_there));
  const auto sums_back = copy_to_host(sums_there);
  EXPECT_TRUE(same_bits(sums, std::span<const float>(sums_back)));
}

TEST_F(CudaTrainKernels, FillAndScaleGiveTheCpusBits) {
  std::mt19937_64 gen(25);
  const auto m = with_special_values(gen, 1000, 77);
  auto expected = m.data;
  scale(cpu_exec, expected, 0.37f);
  auto there = on_gpu(m);
  scale(gpu(), there.data, 0.37f);
  EXPECT_TRUE(same_bits(expected, there.to_host()));
  fill(gpu(), there.data, 2.5f);
  EXPECT_EQ(there.to_host(), std::vector<float>(m.data.size(), 2.5f));
}

TEST_F(CudaTrainKernels, SoftmaxCrossEntropyGivesTheCpusBits) {
  std::mt19937_64 gen(25);
  const auto logits = random_dense(gen, 1000, 47, -20.0f, 20.0f);
  std::vector<std::int32_t> labels(1000);
  std::uniform_int_distribution<std::int32_t> label(0, 46);
  for (auto& l : labels) l = label(gen);
  dense_matrix expected_grad(1000, 47);
  const auto expected =
      softmax_cross_entropy(cpu_exec, logits.view(), labels, expected_grad.view());
  auto logits_there = on_gpu(logits);
  auto grad = on_gpu(expected_grad);
  const auto labels_there = on_gpu(labels);
  const auto actual = softmax_cross_entropy(
      gpu(), logits_there.view(), std::span<const std::int32_t>(labels_there), grad.view());
  EXPECT_EQ(actual.loss, expected.loss);
  EXPECT_EQ(actual.correct, expected.correct);
  EXPECT_EQ(actual.count, expected.count);
  EXPECT_TRUE(same_bits(expected_grad.data, grad.to_host()));
  EXPECT_EQ(count_correct(gpu(), logits_there.view(), std::span<const std::int32_t>(labels_there)),
            expected.correct);
}

TEST_F(CudaTrainKernels, SoftmaxCrossEntropyNamesTheRowOfALabelOutOfRange) {
  dense_matrix logits(8, 3);
  std::vector<std::int32_t> labels{0, 1, 2, 0, 1, 3, 2, -1};
  auto logits_there = on_gpu(logits);
  const auto labels_there = on_gpu(labels);
  try {
    (void)softmax_cross_entropy(gpu(), logits_there.view(),
                                std::span<const std::int32_t>(labels_there), {});
    FAIL() << "a label outside [0, 3) was accepted";
  } catch (const error& e) {
    EXPECT_NE(std::string(e.what()).find("row 5 has label 3"), std::string::npos) << e.what();
  }
}

// Link scoring's kernels: the entrywise product and the logistic loss over
// scores that reach both tails, with labels 0, 1 and in between.
TEST_F(CudaTrainKernels, MultiplyAndBinaryCrossEntropyGiveTheCpusBits) {
  std::mt19937_64 gen(26);
  const auto a = with_special_values(gen, 300, 31);
  const auto b = random_dense(gen, 300, 31);
  dense_matrix expected_product(300, 31);
  multiply(cpu_exec, a.view(), b.view(), expected_product.view());
  auto a_there = on_gpu(a);
  auto b_there = on_gpu(b);
  auto product = on_gpu(expected_product);
  multiply(gpu(), a_there.view(), b_there.view(), product.view());
  EXPECT_TRUE(same_bits(expected_product.data, product.to_host()));

  const auto scores = random_dense(gen, 5000, 1, -40.0f, 40.0f);
  std::vector<float> labels(5000);
  std::uniform_real_distribution<float> fraction(0.0f, 1.0f);
  for (std::size_t i = 0; i < labels.size(); ++i)
    labels[i] = i % 3 == 0 ? 1.0f : i % 3 == 1 ? 0.0f : fraction(gen);
  std::vector<float> expected_grad(5000);
  const auto expected = binary_cross_entropy(cpu_exec, scores.data, labels, expected_grad);
  const auto scores_there = on_gpu(scores.data);
  const auto labels_there = on_gpu(labels);
  auto grad = on_gpu(std::vector<float>(5000));
  const auto actual =
      binary_cross_entropy(gpu(), std::span<const float>(scores_there),
                           std::span<const float>(labels_there), std::span<float>(grad));
  EXPECT_EQ(actual.loss, expected.loss);
  EXPECT_EQ(actual.correct, expected.correct);
  EXPECT_EQ(actual.count, expected.count);
  const auto grad_back = copy_to_host(grad);
  EXPECT_TRUE(same_bits(expected_grad, std::vector<float>(grad_back.begin(), grad_back.end())));
}

TEST_F(CudaTrainKernels, BinaryCrossEntropyNamesALabelOutsideZeroToOne) {
  const auto scores = on_gpu(std::vector<float>(6, 0.5f));
  const auto labels = on_gpu(std::vector<float>{0, 1, 0.5f, 1, 2, -1});
  try {
    (void)binary_cross_entropy(gpu(), std::span<const float>(scores),
                               std::span<const float>(labels), {});
    FAIL() << "a label outside [0, 1] was accepted";
  } catch (const error& e) {
    EXPECT_NE(std::string(e.what()).find("label 2 at index 4 is outside [0, 1]"), std::string::npos)
        << e.what();
  }
}

TEST_F(CudaTrainKernels, AdamStepGivesTheCpusBits) {
  std::mt19937_64 gen(26);
  const auto constants = adam_constants_for({.lr = 0.01f, .weight_decay = 5e-4f}, 3);
  auto parameters = random_dense(gen, 1, 10000).data;
  const auto gradients = random_dense(gen, 1, 10000).data;
  auto m = random_dense(gen, 1, 10000, -0.1f, 0.1f).data;
  auto v = random_dense(gen, 1, 10000, 0.0f, 0.01f).data;
  auto parameters_there = on_gpu(parameters);
  const auto gradients_there = on_gpu(gradients);
  auto m_there = on_gpu(m);
  auto v_there = on_gpu(v);
  adam_step(cpu_exec, constants, parameters, gradients, m, v);
  adam_step(gpu(), constants, std::span<float>(parameters_there),
            std::span<const float>(gradients_there), std::span<float>(m_there),
            std::span<float>(v_there));
  for (const auto& [host, there] : {std::pair{&parameters, &parameters_there},
                                    std::pair{&m, &m_there}, std::pair{&v, &v_there}}) {
    const auto back = copy_to_host(*there);
    EXPECT_TRUE(same_bits(*host, std::span<const float>(back)));
  }
}

}  // namespace
}  // namespace bulkgnn::kernels
