#include "bulkgnn/kernels/elementwise.hpp"

#include <gtest/gtest.h>

#include <limits>
#include <random>

#include "bulkgnn/core/error.hpp"
#include "test_support.hpp"

namespace bulkgnn::kernels {
namespace {

using testing::cpu_exec;
using testing::reference_exec;
using testing::same_bits;

TEST(Fill, SetsEveryElement) {
  for (const auto& exec : {cpu_exec, reference_exec}) {
    std::vector<float> x(100000, 3.0f);
    fill(exec, x, -0.5f);
    EXPECT_EQ(x, std::vector<float>(100000, -0.5f));
    std::vector<float> none;
    fill(exec, none, 1.0f);
  }
}

TEST(Scale, RoundsEachProductOnceOnEveryBackEnd) {
  std::mt19937_64 gen(5);
  std::uniform_real_distribution<float> value(-1e3f, 1e3f);
  std::vector<float> x(300001);
  for (float& v : x) v = value(gen);
  x[7] = std::numeric_limits<float>::infinity();
  x[8] = -0.0f;
  std::vector<float> expected = x;
  for (float& v : expected) v = static_cast<float>(v * 0.3f);
  for (const auto& exec : {cpu_exec, reference_exec}) {
    auto scaled = x;
    scale(exec, scaled, 0.3f);
    EXPECT_TRUE(same_bits(expected, scaled));
  }
}

TEST(Scale, RejectsAFactorThatIsNotFinite) {
  std::vector<float> x(3, 1.0f);
  EXPECT_THROW(scale(cpu_exec, x, std::numeric_limits<float>::quiet_NaN()), error);
}

TEST(Multiply, RoundsEachProductOnceOnEveryBackEnd) {
  std::mt19937_64 gen(8);
  std::uniform_real_distribution<float> value(-1e3f, 1e3f);
  const std::int64_t rows = 300;
  const std::int64_t cols = 257;
  std::vector<float> a(static_cast<std::size_t>(rows * cols));
  std::vector<float> b(a.size());
  for (auto& v : a) v = value(gen);
  for (auto& v : b) v = value(gen);
  std::vector<float> cpu(a.size());
  std::vector<float> reference(a.size());
  multiply(cpu_exec, {rows, cols, a, memory_space::host}, {rows, cols, b, memory_space::host},
           {rows, cols, cpu, memory_space::host});
  multiply(reference_exec, {rows, cols, a, memory_space::host}, {rows, cols, b, memory_space::host},
           {rows, cols, reference, memory_space::host});
  EXPECT_TRUE(same_bits(cpu, reference));
  for (std::size_t i = 0; i < a.size(); i += 997) EXPECT_EQ(cpu[i], a[i] * b[i]);
}

TEST(Multiply, RefusesShapesThatDiffer) {
  std::vector<float> a(6, 1.0f);
  std::vector<float> out(6);
  EXPECT_THROW(multiply(cpu_exec, {2, 3, a, memory_space::host}, {3, 2, a, memory_space::host},
                        {2, 3, out, memory_space::host}),
               error);
  EXPECT_THROW(multiply(cpu_exec, {2, 3, a, memory_space::host}, {2, 3, a, memory_space::host},
                        {2, 3, a, memory_space::host}),
               error);
}

}  // namespace
}  // namespace bulkgnn::kernels
