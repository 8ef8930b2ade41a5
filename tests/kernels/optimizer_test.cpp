#include "bulkgnn/kernels/optimizer.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "bulkgnn/core/error.hpp"
#include "bulkgnn/core/parallel.hpp"
#include "test_support.hpp"

namespace bulkgnn::kernels {
namespace {

using testing::cpu_exec;
using testing::reference_exec;
using testing::same_bits;

std::vector<float> uniform(std::mt19937_64& gen, std::size_t n, float low, float high) {
  std::vector<float> v(n);
  std::uniform_real_distribution<float> value(low, high);
  for (float& x : v) x = value(gen);
  return v;
}

// Step 1 with m = v = 0 moves every parameter by lr against its gradient's
// sign (m̂ = g, v̂ = g², up to eps).
TEST(AdamStep, FirstStepMovesByLrAgainstTheGradient) {
  std::vector<float> parameters{1.0f, -2.0f, 0.5f};
  const std::vector<float> gradients{0.1f, -0.2f, 0.0f};
  std::vector<float> m(3), v(3);
  adam_step(cpu_exec, adam_constants_for({.lr = 0.1f}, 1), parameters, gradients, m, v);
  EXPECT_NEAR(parameters[0], 0.9f, 1e-6f);
  EXPECT_NEAR(parameters[1], -1.9f, 1e-6f);
  EXPECT_EQ(parameters[2], 0.5f);
}

// Many steps over sizes that cross the parallel threshold, with weight
// decay: parameters and both moments equal the reference bit for bit.
TEST(AdamStep, CpuEqualsTheReferenceBitForBit) {
  std::mt19937_64 gen(3);
  for (const int threads : {1, 2, 3, 5}) {
    const thread_limit limit(threads);
    for (const std::size_t n :
         {std::size_t{0}, std::size_t{1}, std::size_t{1000}, std::size_t{70000}}) {
      const auto start = uniform(gen, n, -1.0f, 1.0f);
      std::vector<float> p_cpu = start, p_reference = start;
      std::vector<float> m_cpu(n), v_cpu(n), m_reference(n), v_reference(n);
      for (std::int64_t t = 1; t <= 5; ++t) {
        const auto gradients = uniform(gen, n, -0.1f, 0.1f);
        const auto c = adam_constants_for({.lr = 0.01f, .weight_decay = 0.001f}, t);
        adam_step(cpu_exec, c, p_cpu, gradients, m_cpu, v_cpu);
        adam_step(reference_exec, c, p_reference, gradients, m_reference, v_reference);
      }
      EXPECT_TRUE(same_bits(p_cpu, p_reference)) << n;
      EXPECT_TRUE(same_bits(m_cpu, m_reference)) << n;
      EXPECT_TRUE(same_bits(v_cpu, v_reference)) << n;
    }
  }
}

TEST(AdamStep, RejectsSpansOfDifferentSizesAndNonFiniteConstants) {
  std::vector<float> parameters(3), gradients(3), m(3), v(2);
  const auto c = adam_constants_for({}, 1);
  try {
    adam_step(cpu_exec, c, parameters, gradients, m, v);
    FAIL();
  } catch (const option_error& e) {
    EXPECT_NE(std::string(e.what()).find("adam_step: 3 parameters"), std::string::npos) << e.what();
  }
  v.resize(3);
  auto bad = c;
  bad.step_size = std::numeric_limits<float>::infinity();
  EXPECT_THROW(adam_step(cpu_exec, bad, parameters, gradients, m, v), option_error);
  EXPECT_THROW(adam_step(cpu_exec, c, parameters, gradients, parameters, v), option_error);
  EXPECT_THROW((void)adam_constants_for({}, 0), option_error);
}

}  // namespace
}  // namespace bulkgnn::kernels
