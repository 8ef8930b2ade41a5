#include "bulkgnn/kernels/loss.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <limits>
#include <random>

#include "bulkgnn/core/error.hpp"
#include "gradient_check.hpp"
#include "test_support.hpp"

namespace bulkgnn::kernels {
namespace {

using testing::cpu_exec;
using testing::dense_matrix;
using testing::reference_exec;
using matrix = dense_matrix;

matrix from_rows(const std::vector<std::vector<float>>& rows) {
  matrix m(static_cast<std::int64_t>(rows.size()), static_cast<std::int64_t>(rows[0].size()));
  for (std::size_t r = 0; r < rows.size(); ++r)
    std::copy(rows[r].begin(), rows[r].end(), m.view().row(static_cast<std::int64_t>(r)).begin());
  return m;
}

TEST(SoftmaxCrossEntropy, UniformLogitsCostLogClasses) {
  const matrix logits = from_rows({{2, 2, 2, 2, 2}, {-1, -1, -1, -1, -1}});
  const std::vector<std::int32_t> labels{0, 3};
  matrix grad(2, 5);
  const auto result = softmax_cross_entropy(cpu_exec, logits.view(), labels, grad.view());
  EXPECT_NEAR(result.loss, std::log(5.0), 1e-7);
  EXPECT_EQ(result.count, 2);
  // (softmax − onehot) / rows.
  EXPECT_NEAR(grad.data[0], (0.2 - 1.0) / 2, 1e-7);
  EXPECT_NEAR(grad.data[1], 0.2 / 2, 1e-7);
}

TEST(SoftmaxCrossEntropy, MatchesHandComputedValue) {
  // softmax(0, ln 3) = (1/4, 3/4): loss of label 1 is ln(4/3), of label 0 ln 4.
  const matrix logits = from_rows({{0.0f, std::log(3.0f)}, {0.0f, std::log(3.0f)}});
  const std::vector<std::int32_t> labels{1, 0};
  const auto result = softmax_cross_entropy(cpu_exec, logits.view(), labels, {});
  EXPECT_NEAR(result.loss, (std::log(4.0 / 3.0) + std::log(4.0)) / 2, 1e-6);
  EXPECT_EQ(result.correct, 1);
}

TEST(SoftmaxCrossEntropy, GradientRowsSumToZero) {
  std::mt19937_64 gen(3);
  const matrix logits = testing::random_dense(gen, 20, 7, -5.0f, 5.0f);
  std::vector<std::int32_t> labels(20);
  for (auto& l : labels) l = static_cast<std::int32_t>(gen() % 7);
  matrix grad(20, 7);
  softmax_cross_entropy(cpu_exec, logits.view(), labels, grad.view());
  for (std::int64_t r = 0; r < 20; ++r) {
    double sum = 0;
    for (const float g : grad.view().row(r)) sum += g;
    EXPECT_NEAR(sum, 0.0, 1e-7);
  }
}

TEST(SoftmaxCrossEntropy, StaysFiniteForHugeLogits) {
  const matrix logits = from_rows({{1000.0f, -1000.0f, 0.0f}, {-1e30f, 1e30f, 0.0f}});
  const std::vector<std::int32_t> labels{1, 1};
  matrix grad(2, 3);
  const auto result = softmax_cross_entropy(cpu_exec, logits.view(), labels, grad.view());
  EXPECT_NEAR(result.loss, 2000.0 / 2, 1e-3);
  for (const float g : grad.data) EXPECT_TRUE(std::isfinite(g));
}

TEST(SoftmaxCrossEntropy, GradientMatchesFiniteDifferences) {
  std::mt19937_64 gen(4);
  matrix logits = testing::random_dense(gen, 6, 5, -3.0f, 3.0f);
  const std::vector<std::int32_t> labels{0, 4, 2, 2, 1, 3};
  matrix grad(6, 5);
  softmax_cross_entropy(cpu_exec, logits.view(), labels, grad.view());
  const auto indices = bulkgnn::testing::sample_indices(gen, logits.data.size(), 1000);
  const auto check = bulkgnn::testing::check_gradient(
      logits.data, grad.data, indices,
      [&] { return softmax_cross_entropy(cpu_exec, logits.view(), labels, {}).loss; },
      {.step = 1e-3, .relative = 1e-2, .absolute = 1e-5});
  bulkgnn::testing::expect_gradient_matches(check, "softmax cross-entropy");
  EXPECT_EQ(check.at_kinks, 0);
}

TEST(Accuracy, TiesGoToTheLowestClass) {
  const matrix logits = from_rows({{1, 3, 3}, {1, 3, 3}, {0, 0, 0}});
  EXPECT_EQ(count_correct(cpu_exec, logits.view(), std::vector<std::int32_t>{1, 2, 0}), 2);
  EXPECT_EQ(softmax_cross_entropy(cpu_exec, logits.view(), std::vector<std::int32_t>{1, 2, 0}, {})
                .correct,
            2);
}

TEST(SoftmaxCrossEntropy, RejectsLabelsOutsideTheClassesNamingRowAndLabel) {
  const matrix logits(3, 4);
  try {
    softmax_cross_entropy(cpu_exec, logits.view(), std::vector<std::int32_t>{0, 7, 1}, {});
    FAIL();
  } catch (const data_error&) {
    FAIL() << "a label error is not a data file error";
  } catch (const error& e) {
    EXPECT_NE(std::string(e.what()).find("row 1 has label 7"), std::string::npos) << e.what();
  }
  EXPECT_THROW((void)count_correct(cpu_exec, logits.view(), std::vector<std::int32_t>{0, -1, 1}),
               error);
}

// Random logits of many shapes, some huge, with and without a gradient: the
// cpu back end gives the reference's loss, count and gradient bit for bit.
TEST(SoftmaxCrossEntropy, CpuEqualsTheReferenceBitForBit) {
  std::mt19937_64 gen(9);
  for (const auto& [rows, cols] : {std::pair<std::int64_t, std::int64_t>{0, 3},
                                   {1, 1},
                                   {7, 2},
                                   {300, 16},
                                   {5000, 47},
                                   {20000, 7}}) {
    matrix logits = testing::random_dense(gen, rows, cols, -20.0f, 20.0f);
    if (rows > 1) logits.data[1] = 1e30f;
    std::vector<std::int32_t> labels(static_cast<std::size_t>(rows));
    for (auto& l : labels) l = static_cast<std::int32_t>(gen() % static_cast<std::uint64_t>(cols));
    matrix grad_cpu(rows, cols), grad_reference(rows, cols);
    const auto cpu = softmax_cross_entropy(cpu_exec, logits.view(), labels, grad_cpu.view());
    const auto reference =
        softmax_cross_entropy(reference_exec, logits.view(), labels, grad_reference.view());
    EXPECT_EQ(std::bit_cast<std::uint64_t>(cpu.loss), std::bit_cast<std::uint64_t>(reference.loss))
        << rows << "x" << cols;
    EXPECT_EQ(cpu.correct, reference.correct);
    EXPECT_EQ(cpu.count, reference.count);
    EXPECT_TRUE(testing::same_bits(grad_cpu.data, grad_reference.data)) << rows << "x" << cols;
    const auto without_grad = softmax_cross_entropy(cpu_exec, logits.view(), labels, {});
    EXPECT_EQ(std::bit_cast<std::uint64_t>(without_grad.loss),
              std::bit_cast<std::uint64_t>(reference.loss));
    EXPECT_EQ(count_correct(cpu_exec, logits.view(), labels),
              count_correct(reference_exec, logits.view(), labels));
    EXPECT_EQ(count_correct(cpu_exec, logits.view(), labels), reference.correct);
  }
}

TEST(SoftmaxCrossEntropy, RejectsAGradientOfAnotherShapeNamingIt) {
  const matrix logits(3, 4);
  matrix grad(3, 5);
  try {
    softmax_cross_entropy(cpu_exec, logits.view(), std::vector<std::int32_t>{0, 1, 2}, grad.view());
    FAIL();
  } catch (const option_error& e) {
    EXPECT_NE(std::string(e.what()).find("softmax_cross_entropy: grad is 3x5"), std::string::npos)
        << e.what();
  }
}

// Σ w_r·loss_r with grad rows w_r·(softmax − onehot): with every weight 1/rows,
// the mean loss and its gradient to the rounding of the weight; with weights
// w, the unweighted rows' losses weighed and summed (its definition).
TEST(WeightedSoftmaxCrossEntropy, IsTheWeightedSumOfTheRowLosses) {
  std::mt19937_64 gen(4);
  const matrix logits = testing::random_dense(gen, 50, 6, -5.0f, 5.0f);
  std::vector<std::int32_t> labels(50);
  for (auto& l : labels) l = static_cast<std::int32_t>(gen() % 6);
  std::vector<float> weights(50);
  for (auto& w : weights) w = static_cast<float>(gen() % 1000) / 250.0f;
  weights[3] = 0;
  matrix grad(50, 6), row_grad(1, 6);
  const auto weighted =
      weighted_softmax_cross_entropy(cpu_exec, logits.view(), labels, weights, grad.view());
  double expected = 0;
  for (std::int64_t r = 0; r < 50; ++r) {
    const matrix row =
        from_rows({std::vector<float>(logits.view().row(r).begin(), logits.view().row(r).end())});
    const auto one =
        softmax_cross_entropy(cpu_exec, row.view(), std::vector{labels[r]}, row_grad.view());
    expected += weights[r] * one.loss;
    for (std::int64_t c = 0; c < 6; ++c)
      EXPECT_NEAR(grad.view().row(r)[c], weights[r] * row_grad.view().row(0)[c], 1e-6)
          << r << ", " << c;
  }
  EXPECT_NEAR(weighted.loss, expected, 1e-9 * std::abs(expected));
  EXPECT_EQ(weighted.count, 50);
  EXPECT_EQ(weighted.correct, count_correct(cpu_exec, logits.view(), labels));
  const std::vector<float> mean_weights(50, 1.0f / 50.0f);
  matrix mean_grad(50, 6);
  EXPECT_NEAR(
      weighted_softmax_cross_entropy(cpu_exec, logits.view(), labels, mean_weights, {}).loss,
      softmax_cross_entropy(cpu_exec, logits.view(), labels, mean_grad.view()).loss, 1e-6);
}

TEST(WeightedSoftmaxCrossEntropy, CpuEqualsTheReferenceBitForBit) {
  std::mt19937_64 gen(10);
  for (const auto& [rows, cols] :
       {std::pair<std::int64_t, std::int64_t>{0, 3}, {1, 1}, {300, 16}, {20000, 7}}) {
    const matrix logits = testing::random_dense(gen, rows, cols, -20.0f, 20.0f);
    std::vector<std::int32_t> labels(static_cast<std::size_t>(rows));
    for (auto& l : labels) l = static_cast<std::int32_t>(gen() % static_cast<std::uint64_t>(cols));
    std::vector<float> weights(static_cast<std::size_t>(rows));
    for (auto& w : weights) w = static_cast<float>(gen() % 4096) / 1024.0f;
    matrix grad_cpu(rows, cols), grad_reference(rows, cols);
    const auto cpu =
        weighted_softmax_cross_entropy(cpu_exec, logits.view(), labels, weights, grad_cpu.view());
    const auto reference = weighted_softmax_cross_entropy(reference_exec, logits.view(), labels,
                                                          weights, grad_reference.view());
    EXPECT_EQ(std::bit_cast<std::uint64_t>(cpu.loss), std::bit_cast<std::uint64_t>(reference.loss))
        << rows << "x" << cols;
    EXPECT_EQ(cpu.correct, reference.correct);
    EXPECT_TRUE(testing::same_bits(grad_cpu.data, grad_reference.data)) << rows << "x" << cols;
  }
}

TEST(WeightedSoftmaxCrossEntropy, RefusesWeightsThatAreNoWeightsNamingTheRow) {
  const matrix logits(3, 4);
  const std::vector<std::int32_t> labels{0, 1, 2};
  for (const float bad :
       {-1.0f, std::numeric_limits<float>::quiet_NaN(), std::numeric_limits<float>::infinity()}) {
    try {
      std::ignore = weighted_softmax_cross_entropy(cpu_exec, logits.view(), labels,
                                                   std::vector<float>{1, bad, 1}, {});
      ADD_FAILURE() << bad << " accepted";
    } catch (const option_error& e) {
      EXPECT_NE(std::string(e.what()).find("row 1 has weight"), std::string::npos) << e.what();
    }
  }
  EXPECT_THROW(std::ignore = weighted_softmax_cross_entropy(cpu_exec, logits.view(), labels,
                                                            std::vector<float>{1, 1}, {}),
               option_error);
}

// torch.nn.functional.binary_cross_entropy_with_logits on the same values:
// at s = 0 each term is log 2; the gradient is (σ(s) − y)/n.
TEST(BinaryCrossEntropy, MatchesTheClosedForm) {
  const std::vector<float> scores{0.0f, 2.0f, -3.0f, 40.0f, -40.0f};
  const std::vector<float> labels{1.0f, 0.0f, 0.25f, 1.0f, 1.0f};
  std::vector<float> grad(scores.size());
  const auto result = binary_cross_entropy(cpu_exec, scores, labels, grad);
  double want = 0;
  for (std::size_t i = 0; i < scores.size(); ++i) {
    const double s = scores[i];
    const double y = labels[i];
    want += std::max(s, 0.0) - s * y + std::log1p(std::exp(-std::fabs(s)));
    const double sigmoid = 1.0 / (1.0 + std::exp(-s));
    EXPECT_NEAR(grad[i], (sigmoid - y) / 5.0, 1e-7) << i;
  }
  EXPECT_NEAR(result.loss, want / 5.0, 1e-12);
  EXPECT_NEAR(result.loss * 5.0 - 40.0, want - 40.0, 1e-12);  // the −40 term stays finite
  EXPECT_EQ(result.count, 5);
  EXPECT_EQ(result.correct, 2);  // 2 → 0 and 40 → 1 right; 0 → 1 is on the wrong side
}

TEST(BinaryCrossEntropy, CpuEqualsTheReferenceBitForBit) {
  std::mt19937_64 gen(3);
  for (const std::size_t n : {0, 1, 7, 5000, 100000}) {
    std::vector<float> scores(n);
    std::vector<float> labels(n);
    std::uniform_real_distribution<float> score(-30.0f, 30.0f);
    for (std::size_t i = 0; i < n; ++i) {
      scores[i] = score(gen);
      labels[i] = static_cast<float>(gen() % 2);
    }
    std::vector<float> grad_cpu(n);
    std::vector<float> grad_reference(n);
    const auto cpu = binary_cross_entropy(cpu_exec, scores, labels, grad_cpu);
    const auto reference = binary_cross_entropy(reference_exec, scores, labels, grad_reference);
    EXPECT_EQ(std::bit_cast<std::uint64_t>(cpu.loss), std::bit_cast<std::uint64_t>(reference.loss))
        << n;
    EXPECT_EQ(cpu.correct, reference.correct);
    EXPECT_TRUE(testing::same_bits(grad_cpu, grad_reference)) << n;
    const auto without_grad = binary_cross_entropy(cpu_exec, scores, labels, {});
    EXPECT_EQ(std::bit_cast<std::uint64_t>(without_grad.loss),
              std::bit_cast<std::uint64_t>(reference.loss));
  }
}

TEST(BinaryCrossEntropy, RejectsLabelsOutsideZeroOneNamingTheIndex) {
  const std::vector<float> scores{0.0f, 1.0f};
  for (const float bad : {2.0f, -0.5f, std::numeric_limits<float>::quiet_NaN()}) {
    const std::vector<float> labels{1.0f, bad};
    try {
      std::ignore = binary_cross_entropy(cpu_exec, scores, labels, {});
      ADD_FAILURE() << "label " << bad << " accepted";
    } catch (const error& e) {
      EXPECT_NE(std::string(e.what()).find("index 1"), std::string::npos) << e.what();
    }
  }
  const std::vector<float> one_label{1.0f};
  EXPECT_THROW(std::ignore = binary_cross_entropy(cpu_exec, scores, one_label, {}), error);
}

}  // namespace
}  // namespace bulkgnn::kernels
