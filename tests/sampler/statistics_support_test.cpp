// The statistics the sampler tests rest on (tests/support/statistics.hpp)
// against values computed another way.
#include "statistics.hpp"

#include "bulkgnn/core/rng.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <numeric>
#include <vector>

namespace bulkgnn::testing {
namespace {

TEST(SamplerStatistics, NormalQuantilesAreTheTabulatedOnes) {
  EXPECT_NEAR(normal_upper_quantile(0.025), 1.959963984540054, 1e-9);
  EXPECT_NEAR(normal_upper_quantile(1e-4), 3.719016485455709, 1e-9);
  EXPECT_NEAR(normal_upper_quantile(0.99), -2.326347874040841, 1e-9);
}

TEST(SamplerStatistics, PoissonCriticalValueIsTheLeastWithTheTailUnderAlpha) {
  for (double mean : {0.5, 4.0, 63.0, 1000.0}) {
    const auto c = poisson_upper_critical(mean);
    EXPECT_LE(poisson_tail_above(mean, c), sampler_alpha) << mean;
    EXPECT_GT(poisson_tail_above(mean, c - 1), sampler_alpha) << mean;
  }
}

// Every ordered sequence of draws, with its probability under successive
// sampling, summed per item.
std::vector<double> enumerated_inclusion(const std::vector<double>& w, int draws) {
  std::vector<double> inclusion(w.size(), 0);
  std::vector<int> taken;
  auto visit = [&](auto&& self, double probability, double left) -> void {
    if (static_cast<int>(taken.size()) == draws) {
      for (int i : taken) inclusion[static_cast<std::size_t>(i)] += probability;
      return;
    }
    for (std::size_t i = 0; i < w.size(); ++i) {
      if (std::find(taken.begin(), taken.end(), static_cast<int>(i)) != taken.end()) continue;
      taken.push_back(static_cast<int>(i));
      self(self, probability * w[i] / left, left - w[i]);
      taken.pop_back();
    }
  };
  visit(visit, 1.0, std::accumulate(w.begin(), w.end(), 0.0));
  return inclusion;
}

TEST(SamplerStatistics, SuccessiveSamplingInclusionIsTheEnumeratedOne) {
  philox_stream rng(rng_key{1, 0, 0, 0, 0});
  std::vector<double> w(7);
  for (auto& x : w) x = 0.05 + rng.uniform_open01();
  w[2] = 3.0;  // one heavy item, drawn almost always
  for (int draws : {1, 2, 3, 5}) {
    const auto exact = enumerated_inclusion(w, draws);
    const auto computed = successive_sampling_inclusion(w, draws);
    for (std::size_t i = 0; i < w.size(); ++i)
      EXPECT_NEAR(computed[i], exact[i], 1e-7) << draws << " draws, item " << i;
    EXPECT_NEAR(std::accumulate(computed.begin(), computed.end(), 0.0), draws, 1e-6);
  }
}

TEST(SamplerStatistics, PowerGrowsWithTrialsAndBias) {
  const count_test_family family{.cells = 20};
  EXPECT_LT(family.power(1000, 0.25, 0.05), 0.05);
  EXPECT_GT(family.power(100000, 0.25, 0.05), 0.99);
  EXPECT_LT(family.power(100000, 0.25, 0.01), family.power(100000, 0.25, 0.05));
  // Without bias the power is the cell's share of alpha.
  EXPECT_NEAR(family.power(100000, 0.25, 0), sampler_alpha / 20, 1e-9);
}

TEST(SamplerStatistics, ChiSquareTailAndPowerAreTheTabulatedOnes) {
  // Tables: P(chi2_10 > 18.307) = 0.05, P(chi2_100 > 124.342) = 0.05.
  EXPECT_NEAR(chi_square_tail_above(18.307, 10), 0.05, 0.003);
  EXPECT_NEAR(chi_square_tail_above(124.342, 100), 0.05, 0.001);
  // Noncentral chi-square with 10 degrees and lambda 20 exceeds 18.307 with
  // probability 0.8905 (the Poisson mixture of central tails, summed exactly).
  EXPECT_NEAR(chi_square_power(10, 20, 18.307), 0.8905, 0.01);
  // No noncentrality: the power is the false-alarm rate.
  EXPECT_NEAR(chi_square_power(10, 0, 18.307), 0.05, 0.003);
}

}  // namespace
}  // namespace bulkgnn::testing
