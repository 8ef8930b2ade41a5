#include "bulkgnn/trainer/loss.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "bulkgnn/core/error.hpp"
#include "test_support.hpp"

namespace bulkgnn::trainer {
namespace {

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
  const auto result = softmax_cross_entropy(logits.view(), labels, grad.view());
  EXPECT_NEAR(result.loss, std::log(5.0), 1e-7);
  EXPECT_EQ(result.count, 2);
  // (softmax − onehot) / rows.
  EXPECT_NEAR(grad.data()[0], (0.2 - 1.0) / 2, 1e-7);
  EXPECT_NEAR(grad.data()[1], 0.2 / 2, 1e-7);
}

TEST(SoftmaxCrossEntropy, MatchesHandComputedValue) {
  // softmax(0, ln 3) = (1/4, 3/4): loss of label 1 is ln(4/3), of label 0 ln 4.
  const matrix logits = from_rows({{0.0f, std::log(3.0f)}, {0.0f, std::log(3.0f)}});
  const std::vector<std::int32_t> labels{1, 0};
  const auto result = softmax_cross_entropy(logits.view(), labels, {});
  EXPECT_NEAR(result.loss, (std::log(4.0 / 3.0) + std::log(4.0)) / 2, 1e-6);
  EXPECT_EQ(result.correct, 1);
}

TEST(SoftmaxCrossEntropy, GradientRowsSumToZero) {
  std::mt19937_64 gen(3);
  const matrix logits = testing::random_matrix(gen, 20, 7, -5.0f, 5.0f);
  std::vector<std::int32_t> labels(20);
  for (auto& l : labels) l = static_cast<std::int32_t>(gen() % 7);
  matrix grad(20, 7);
  softmax_cross_entropy(logits.view(), labels, grad.view());
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
  const auto result = softmax_cross_entropy(logits.view(), labels, grad.view());
  EXPECT_NEAR(result.loss, 2000.0 / 2, 1e-3);
  for (const float g : grad.data()) EXPECT_TRUE(std::isfinite(g));
}

TEST(SoftmaxCrossEntropy, GradientMatchesFiniteDifferences) {
  std::mt19937_64 gen(4);
  matrix logits = testing::random_matrix(gen, 6, 5, -3.0f, 3.0f);
  const std::vector<std::int32_t> labels{0, 4, 2, 2, 1, 3};
  matrix grad(6, 5);
  softmax_cross_entropy(logits.view(), labels, grad.view());
  const auto indices = testing::sample_indices(gen, logits.data().size(), 1000);
  const auto check =
      testing::check_gradient(logits.data(), grad.data(), indices,
                              [&] { return softmax_cross_entropy(logits.view(), labels, {}).loss; },
                              {.step = 1e-3, .relative = 1e-2, .absolute = 1e-5});
  testing::expect_gradient_matches(check, "softmax cross-entropy");
  EXPECT_EQ(check.at_kinks, 0);
}

TEST(Accuracy, TiesGoToTheLowestClass) {
  const matrix logits = from_rows({{1, 3, 3}, {1, 3, 3}, {0, 0, 0}});
  EXPECT_EQ(count_correct(logits.view(), std::vector<std::int32_t>{1, 2, 0}), 2);
  EXPECT_EQ(softmax_cross_entropy(logits.view(), std::vector<std::int32_t>{1, 2, 0}, {}).correct,
            2);
}

TEST(SoftmaxCrossEntropy, RejectsLabelsOutsideTheClassesNamingRowAndLabel) {
  const matrix logits(3, 4);
  try {
    softmax_cross_entropy(logits.view(), std::vector<std::int32_t>{0, 7, 1}, {});
    FAIL();
  } catch (const data_error&) {
    FAIL() << "a label error is not a data file error";
  } catch (const error& e) {
    EXPECT_NE(std::string(e.what()).find("row 1 has label 7"), std::string::npos) << e.what();
  }
  EXPECT_THROW((void)count_correct(logits.view(), std::vector<std::int32_t>{0, -1, 1}), error);
}

}  // namespace
}  // namespace bulkgnn::trainer
