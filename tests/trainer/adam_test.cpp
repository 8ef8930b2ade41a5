#include "bulkgnn/trainer/adam.hpp"

#include <gtest/gtest.h>

#include <vector>

#include "bulkgnn/core/error.hpp"

namespace bulkgnn::trainer {
namespace {

const std::vector<std::vector<float>> gradients{
    {0.1f, -0.2f, 0.0f}, {0.3f, 0.1f, -0.5f}, {-0.2f, 0.4f, 0.25f}};

// Expected values from the torch.optim.Adam update written out in double:
// step 1 moves every parameter with a nonzero gradient by lr against the
// gradient's sign (m̂ = g, v̂ = g²); e.g. parameter 0 at step 2 has m = 0.039,
// v = 9.999e-5, m̂ = 0.039 / 0.19, v̂ = 9.999e-5 / 0.001999, so it moves by
// 0.1 · 0.205263 / 0.223651 = 0.091778.
void expect_trajectory(adam_options options, const std::vector<std::vector<float>>& expected) {
  std::vector<float> parameters{1.0f, -2.0f, 0.5f};
  adam optimiser(parameters.size(), options);
  for (std::size_t t = 0; t < gradients.size(); ++t) {
    optimiser.step(parameters, gradients[t]);
    for (std::size_t i = 0; i < parameters.size(); ++i)
      EXPECT_NEAR(parameters[i], expected[t][i], 2e-6) << "step " << t + 1 << " parameter " << i;
  }
  EXPECT_EQ(optimiser.steps(), 3);
}

TEST(Adam, FollowsTorchAdamWithoutWeightDecay) {
  expect_trajectory({.lr = 0.1f}, {{0.9f, -1.9f, 0.5f},
                                   {0.8082219f, -1.8733663f, 0.5744137f},
                                   {0.7824315f, -1.9190995f, 0.5972777f}});
}

TEST(Adam, AddsWeightDecayToTheGradientLikeTorchAdam) {
  expect_trajectory({.lr = 0.1f, .weight_decay = 0.5f}, {{0.9f, -1.9f, 0.4f},
                                                         {0.8000359f, -1.802304f, 0.4142945f},
                                                         {0.7113559f, -1.710206f, 0.3728821f}});
}

TEST(Adam, RestoredStateContinuesTheSameTrajectory) {
  std::vector<float> straight{1.0f, -2.0f, 0.5f};
  adam first(3, {.lr = 0.1f});
  for (const auto& g : gradients) first.step(straight, g);

  std::vector<float> resumed{1.0f, -2.0f, 0.5f};
  adam before(3, {.lr = 0.1f});
  before.step(resumed, gradients[0]);
  adam after(3, {.lr = 0.1f});
  after.set_steps(before.steps());
  after.set_moments(before.first_moment_on_host(), before.second_moment_on_host());
  after.step(resumed, gradients[1]);
  after.step(resumed, gradients[2]);
  EXPECT_EQ(resumed, straight);
}

TEST(Adam, RejectsImpossibleOptionsNamingThem) {
  EXPECT_THROW(validate(adam_options{.lr = 0.0f}), option_error);
  EXPECT_THROW(validate(adam_options{.lr = std::numeric_limits<float>::infinity()}), option_error);
  try {
    validate(adam_options{.weight_decay = -1.0f});
    FAIL();
  } catch (const option_error& e) {
    EXPECT_NE(std::string(e.what()).find("adam_options.weight_decay"), std::string::npos)
        << e.what();
  }
  try {
    validate(adam_options{.lr = std::numeric_limits<float>::quiet_NaN()});
    FAIL();
  } catch (const option_error& e) {
    EXPECT_NE(std::string(e.what()).find("adam_options.lr"), std::string::npos) << e.what();
  }
}

TEST(Adam, RejectsParametersOfAnotherSize) {
  adam optimiser(3, {});
  std::vector<float> parameters(4);
  std::vector<float> grads(4);
  EXPECT_THROW(optimiser.step(parameters, grads), option_error);
}

}  // namespace
}  // namespace bulkgnn::trainer
