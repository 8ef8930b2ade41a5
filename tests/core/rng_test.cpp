#include "bulkgnn/core/rng.hpp"

#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

namespace bulkgnn {
namespace {

TEST(PhiloxStream, SameKeyGivesSameSequence) {
  philox_stream a(rng_key{7, 1, 2, 3, 4});
  philox_stream b(rng_key{7, 1, 2, 3, 4});
  for (int i = 0; i < 100; ++i) EXPECT_EQ(a.next_u32(), b.next_u32());
}

TEST(PhiloxStream, EveryKeyFieldChangesTheSequence) {
  const rng_key base{7, 1, 2, 3, 4};
  std::vector<rng_key> variants(5, base);
  variants[0].seed++;
  variants[1].epoch++;
  variants[2].minibatch++;
  variants[3].layer++;
  variants[4].row++;
  const auto first = philox_stream(base).next_u64();
  for (const auto& key : variants) EXPECT_NE(philox_stream(key).next_u64(), first);
}

TEST(PhiloxStream, UniformBelowIsUniform) {
  // Chi-square goodness of fit over 7 cells; 22.46 is the 0.999 quantile for
  // 6 degrees of freedom, so a correct generator fails once in 1000 seeds.
  constexpr std::uint32_t cells = 7;
  constexpr int draws = 70000;
  philox_stream rng(rng_key{1, 0, 0, 0, 0});
  std::vector<int> counts(cells);
  for (int i = 0; i < draws; ++i) counts[rng.uniform_below(cells)]++;
  double chi2 = 0;
  const double expected = static_cast<double>(draws) / cells;
  for (int c : counts) chi2 += (c - expected) * (c - expected) / expected;
  EXPECT_LT(chi2, 22.46);
}

TEST(PhiloxStream, UniformOpen01StaysInsideTheInterval) {
  philox_stream rng(rng_key{3, 0, 0, 0, 0});
  double sum = 0;
  for (int i = 0; i < 100000; ++i) {
    const double u = rng.uniform_open01();
    ASSERT_GT(u, 0.0);
    ASSERT_LT(u, 1.0);
    sum += u;
  }
  EXPECT_NEAR(sum / 100000, 0.5, 0.005);
}

TEST(PhiloxStream, NormalHasUnitVariance) {
  philox_stream rng(rng_key{5, 0, 0, 0, 0});
  double sum = 0, sum_sq = 0;
  constexpr int n = 200000;
  for (int i = 0; i < n; ++i) {
    const double x = rng.normal();
    sum += x;
    sum_sq += x * x;
  }
  EXPECT_NEAR(sum / n, 0.0, 0.01);
  EXPECT_NEAR(sum_sq / n, 1.0, 0.02);
}

// The batched blocks are the stream's words, block for block, for any key and
// any starting block (run once more with BULKGNN_NO_AVX512=1 by ctest, so
// both the AVX-512 and the portable paths are checked on AVX-512 machines).
TEST(Philox16Blocks, AreTheWordsPhiloxStreamHandsOut) {
  for (const rng_key key : {rng_key{0, 0, 0, 0, 0}, rng_key{11, 3, 9, 1000, 77},
                            rng_key{0xFFFFFFFFu, 0x80000000u, no_minibatch, 7, 0xDEADBEEFu}}) {
    for (const std::uint32_t first_block : {0u, 1u, 16u, 1000u}) {
      std::uint32_t words[64];
      philox_16_blocks(key, first_block, words);
      philox_stream stream(key);
      for (std::uint32_t skip = 0; skip < 4 * first_block; ++skip) (void)stream.next_u32();
      for (int w = 0; w < 64; ++w) ASSERT_EQ(words[w], stream.next_u32()) << "word " << w;
    }
  }
}

TEST(PhiloxStream, SkipToWordContinuesAsIfTheWordsBeforeHadBeenDrawn) {
  const rng_key key{9, 2, 4, 1, 123};
  philox_stream whole(key);
  std::vector<std::uint32_t> words(40);
  for (auto& w : words) w = whole.next_u32();
  for (std::uint64_t start = 0; start < 30; ++start) {
    philox_stream skipped(key);
    skipped.skip_to_word(start);
    for (std::uint64_t w = start; w < words.size(); ++w)
      ASSERT_EQ(skipped.next_u32(), words[w]) << "from word " << start << ", word " << w;
  }
}

TEST(Philox16Blocks, MatchRandom123AtAnyCounter) {
  const rng_key key{5, 6, 7, 8, 9};
  std::uint32_t words[64];
  philox_16_blocks(key, 0xFFFFFFF0u, words);
  for (std::uint32_t b = 0; b < 16; ++b) {
    const auto block = r123::Philox4x32()({{7, 8, 9, 0xFFFFFFF0u + b}}, {{5, 6}});
    for (int w = 0; w < 4; ++w) ASSERT_EQ(words[4 * b + w], block.v[w]) << "block " << b;
  }
}

}  // namespace
}  // namespace bulkgnn

namespace {

// Distance in representable doubles between two positive or two negative
// finite values.
std::int64_t ulps_apart(double a, double b) {
  const auto x = std::bit_cast<std::int64_t>(a);
  const auto y = std::bit_cast<std::int64_t>(b);
  return x > y ? x - y : y - x;
}

}  // namespace

TEST(PortableLog, IsWithinTwoUlpsOfTheLibrarysLogOverTheUniformsAndBeyond) {
  bulkgnn::philox_stream rng({5, 0, 0, 0, 0});
  std::int64_t worst = 0;
  for (int i = 0; i < 1'000'000; ++i) {
    const double u = rng.uniform_open01();
    worst = std::max(worst, ulps_apart(bulkgnn::portable_log(u), std::log(u)));
  }
  // Near 1 the result is tiny and its ulp is tiny too: the relative error
  // stays as small.
  for (const double x : {0x1.0p-53, 0.5, 0.70710678118654752440, 0.9999999, 1.0000001, 1.5,
                         1.9999999, 3.0, 1e300, 1e-300}) {
    if (x == 1.0) continue;
    worst = std::max(worst, ulps_apart(bulkgnn::portable_log(x), std::log(x)));
  }
  EXPECT_LE(worst, 2);
  EXPECT_EQ(bulkgnn::portable_log(1.0), 0.0);
  EXPECT_EQ(bulkgnn::portable_log(2.0), std::log(2.0));
}

TEST(PortableExp, IsWithinTwoUlpsOfTheLibrarysExpWhereSoftmaxUsesIt) {
  bulkgnn::philox_stream rng({7, 0, 0, 0, 0});
  std::int64_t worst = 0;
  for (int i = 0; i < 1'000'000; ++i) {
    // Softmax takes e^(x - max) <= 1, mostly of a few tens at most below 0.
    const double x = i % 2 ? -40.0 * rng.uniform_open01() : -700.0 * rng.uniform_open01();
    worst = std::max(worst, ulps_apart(bulkgnn::portable_exp(x), std::exp(x)));
  }
  for (const double x : {-1e-300, -0x1.0p-53, -0.34657359, 0.34657359, 1.0, 88.7, 700.0, 709.0})
    worst = std::max(worst, ulps_apart(bulkgnn::portable_exp(x), std::exp(x)));
  EXPECT_LE(worst, 2);
  EXPECT_EQ(bulkgnn::portable_exp(0.0), 1.0);
  EXPECT_EQ(bulkgnn::portable_exp(-701.0), 0.0);
  EXPECT_EQ(bulkgnn::portable_exp(-std::numeric_limits<double>::infinity()), 0.0);
  EXPECT_EQ(bulkgnn::portable_exp(710.0), std::numeric_limits<double>::infinity());
  EXPECT_TRUE(std::isnan(bulkgnn::portable_exp(std::numeric_limits<double>::quiet_NaN())));
  EXPECT_TRUE(std::isnan(bulkgnn::portable_log(std::numeric_limits<double>::quiet_NaN())));
}

TEST(PortableLog, ExponentialVariatesHaveUnitMeanAndVariance) {
  bulkgnn::philox_stream rng({6, 0, 0, 0, 0});
  constexpr int n = 400'000;
  double sum = 0;
  double squares = 0;
  for (int i = 0; i < n; ++i) {
    const double e = rng.exponential();
    sum += e;
    squares += e * e;
  }
  const double mean = sum / n;
  // Standard errors: 1/sqrt(n) for the mean, about sqrt(8/n) for the variance.
  EXPECT_NEAR(mean, 1.0, 5.0 / std::sqrt(n));
  EXPECT_NEAR(squares / n - mean * mean, 1.0, 5.0 * std::sqrt(8.0 / n));
}
