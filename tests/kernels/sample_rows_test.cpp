#include "bulkgnn/kernels/sample_rows.hpp"

#include "bulkgnn/kernels/rules/labor_importance.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <map>
#include <numeric>
#include <set>

#include "bulkgnn/core/error.hpp"
#include "bulkgnn/core/parallel.hpp"
#include "test_support.hpp"

namespace bulkgnn::kernels {
namespace {

using testing::chi_square;
using testing::chi_square_critical;
using testing::cpu_exec;
using testing::reference_exec;

constexpr int trials = 40000;

// Samples row 0 of `a` `trials` times in one call: each trial is another
// minibatch, hence an independent stream.
csr_matrix sample_repeatedly(const executor& exec, const csr_matrix& a,
                             const row_sampling_options& options) {
  const std::vector<vertex_t> rows(trials, 0);
  std::vector<std::uint32_t> minibatch(trials);
  std::iota(minibatch.begin(), minibatch.end(), 0u);
  return sample_rows(exec, a.view(), rows, {.seed = 7, .minibatch_of_row = minibatch}, options);
}

// How often each column appears in the sample, over all rows.
std::vector<double> column_counts(const csr_matrix& sample) {
  std::vector<double> counts(static_cast<std::size_t>(sample.cols), 0.0);
  for (const vertex_t c : sample.indices) counts[c] += 1.0;
  return counts;
}

// How often each distinct row content was drawn.
std::map<std::vector<vertex_t>, double> outcome_counts(const csr_matrix& sample) {
  std::map<std::vector<vertex_t>, double> counts;
  for (std::int64_t i = 0; i < sample.rows; ++i)
    counts[{sample.indices.begin() + sample.indptr[i],
            sample.indices.begin() + sample.indptr[i + 1]}] += 1.0;
  return counts;
}

class SampleRowsOnBothBackends : public ::testing::TestWithParam<backend> {
 protected:
  executor exec() const { return {GetParam()}; }
};

TEST_P(SampleRowsOnBothBackends, SamplesEachNeighbourWithProbabilitySOverDegree) {
  const auto a = testing::single_row(std::vector<float>(10, 1.0f));
  const auto sample = sample_repeatedly(exec(), a, {.fanout = 3});
  const double p = 3.0 / 10.0;
  for (const double count : column_counts(sample)) {
    const double z = (count - trials * p) / std::sqrt(trials * p * (1 - p));
    EXPECT_LT(std::abs(z), 4.5);
  }
}

TEST_P(SampleRowsOnBothBackends, DrawsEverySubsetEquallyOftenWithoutReplacement) {
  csr_matrix a = testing::single_row(std::vector<float>(5, 1.0f));
  a.values.clear();
  const auto counts = outcome_counts(sample_repeatedly(exec(), a, {.fanout = 2}));
  ASSERT_EQ(counts.size(), 10u);
  std::vector<double> observed;
  for (const auto& [subset, count] : counts) observed.push_back(count);
  EXPECT_LT(chi_square(observed, std::vector<double>(10, trials / 10.0)), chi_square_critical(9));
}

TEST_P(SampleRowsOnBothBackends, NeverRepeatsAnEntryWithoutReplacement) {
  std::mt19937_64 gen(3);
  const auto a = testing::random_csr(gen, {.rows = 300, .cols = 500, .mean_degree = 60});
  std::vector<vertex_t> rows(a.rows);
  std::iota(rows.begin(), rows.end(), 0);
  const std::vector<std::uint32_t> minibatch(rows.size(), 0);
  for (const weighting w : {weighting::uniform, weighting::by_value})
    for (const std::int64_t fanout : {1, 5, 25, 70}) {
      const auto s = sample_rows(exec(), a.view(), rows, {.minibatch_of_row = minibatch},
                                 {.fanout = fanout, .weights = w});
      for (std::int64_t i = 0; i < s.rows; ++i) {
        EXPECT_EQ(s.indptr[i + 1] - s.indptr[i],
                  std::min<edge_t>(fanout, a.indptr[i + 1] - a.indptr[i]));
        // Rows of `a` hold distinct sorted columns, so a sample without
        // repeats in storage order is strictly increasing.
        EXPECT_TRUE(
            std::adjacent_find(s.indices.begin() + s.indptr[i], s.indices.begin() + s.indptr[i + 1],
                               std::greater_equal<>()) == s.indices.begin() + s.indptr[i + 1]);
      }
    }
}

// Probability that successive sampling (draw proportionally to weight, remove,
// repeat) of two entries yields the pair {i, j}.
double successive_pair_probability(const std::vector<float>& w, int i, int j) {
  const double total = std::accumulate(w.begin(), w.end(), 0.0);
  return w[i] / total * w[j] / (total - w[i]) + w[j] / total * w[i] / (total - w[j]);
}

TEST_P(SampleRowsOnBothBackends, WeightedWithoutReplacementMatchesSuccessiveSampling) {
  const std::vector<float> weights{1.0f, 2.0f, 3.0f, 4.0f, 10.0f};
  const auto counts = outcome_counts(sample_repeatedly(
      exec(), testing::single_row(weights), {.fanout = 2, .weights = weighting::by_value}));
  std::vector<double> observed;
  std::vector<double> expected;
  for (int i = 0; i < 5; ++i)
    for (int j = i + 1; j < 5; ++j) {
      const auto found = counts.find({i, j});
      observed.push_back(found == counts.end() ? 0.0 : found->second);
      expected.push_back(trials * successive_pair_probability(weights, i, j));
    }
  EXPECT_LT(chi_square(observed, expected), chi_square_critical(9));
}

TEST_P(SampleRowsOnBothBackends, UniformWithReplacementIsMultinomial) {
  const auto a = testing::single_row(std::vector<float>(4, 1.0f));
  const auto sample = sample_repeatedly(exec(), a, {.fanout = 3, .mode = replacement::with});
  EXPECT_EQ(sample.nnz(), 3 * trials);
  EXPECT_LT(chi_square(column_counts(sample), std::vector<double>(4, 3.0 * trials / 4)),
            chi_square_critical(3));
}

TEST_P(SampleRowsOnBothBackends, WeightedWithReplacementDrawsProportionallyToValue) {
  const std::vector<float> weights{1.0f, 2.0f, 3.0f, 4.0f};
  const auto sample =
      sample_repeatedly(exec(), testing::single_row(weights),
                        {.fanout = 2, .mode = replacement::with, .weights = weighting::by_value});
  std::vector<double> expected;
  for (const float w : weights) expected.push_back(2.0 * trials * w / 10.0);
  EXPECT_LT(chi_square(column_counts(sample), expected), chi_square_critical(3));
}

TEST_P(SampleRowsOnBothBackends, TakesWholeRowsForFanoutMinusOneOrSmallDegree) {
  std::mt19937_64 gen(5);
  const auto a = testing::random_csr(gen, {.rows = 100, .cols = 80, .mean_degree = 4});
  std::vector<vertex_t> rows(a.rows);
  std::iota(rows.begin(), rows.end(), 0);
  const std::vector<std::uint32_t> minibatch(rows.size(), 0);
  const auto whole = [&](const row_sampling_options& o) {
    testing::expect_identical(
        a, sample_rows(exec(), a.view(), rows, {.minibatch_of_row = minibatch}, o));
  };
  whole({.fanout = -1});
  whole({.fanout = -1, .mode = replacement::with});
  whole({.fanout = -1, .weights = weighting::by_value});
  whole({.fanout = 8});
  whole({.fanout = 8, .weights = weighting::by_value});
}

INSTANTIATE_TEST_SUITE_P(Backends, SampleRowsOnBothBackends,
                         ::testing::Values(backend::reference, backend::cpu),
                         [](const auto& info) { return std::string(backend_name(info.param)); });

std::vector<row_sampling_options> every_mode(std::int64_t fanout) {
  std::vector<row_sampling_options> modes;
  for (const replacement r : {replacement::without, replacement::with})
    for (const weighting w : {weighting::uniform, weighting::by_value})
      modes.push_back({.fanout = fanout, .mode = r, .weights = w});
  return modes;
}

TEST(SampleRows, CpuMatchesReferenceOnRandomInputs) {
  std::mt19937_64 gen(11);
  for (int round = 0; round < 12; ++round) {
    const bool weighted = round % 2 == 0;
    const auto a = testing::random_csr(gen, {.rows = 40 + round * 30,
                                             .cols = 200,
                                             .mean_degree = 10 + round * 8,
                                             .weighted = weighted,
                                             .repeats = round % 3 == 0,
                                             .empty_rows = 0.2});
    // Repeated row ids, in random order, with varied minibatches.
    std::uniform_int_distribution<vertex_t> row(0, static_cast<vertex_t>(a.rows - 1));
    std::vector<vertex_t> rows(3 * a.rows);
    std::vector<std::uint32_t> minibatch(rows.size());
    for (std::size_t i = 0; i < rows.size(); ++i) {
      rows[i] = row(gen);
      minibatch[i] = static_cast<std::uint32_t>(i % 4);
    }
    const row_streams streams{.seed = static_cast<std::uint32_t>(round),
                              .epoch = 2,
                              .layer = 1,
                              .minibatch_of_row = minibatch};
    for (const std::int64_t fanout : {1, 2, 7, 25, 70, -1})
      for (const auto& options : every_mode(fanout)) {
        SCOPED_TRACE(::testing::Message() << "round " << round << " fanout " << fanout << " mode "
                                          << static_cast<int>(options.mode) << " weights "
                                          << static_cast<int>(options.weights));
        testing::expect_identical(sample_rows(reference_exec, a.view(), rows, streams, options),
                                  sample_rows(cpu_exec, a.view(), rows, streams, options));
      }
  }
}

// LABOR-0's draw against its definition (sample_rows.hpp): row i keeps entry
// t iff t's shared variate in row i's minibatch is below fanout / degree, or
// the whole row when the degree is at most the fanout; the cpu back end gives
// the reference's result for any thread count.
TEST(SampleRowsWithSharedVariates, KeepsWhatTheDefinitionKeepsOnBothBackends) {
  std::mt19937_64 gen(12);
  for (int round = 0; round < 6; ++round) {
    const auto a = testing::random_csr(
        gen,
        {.rows = 60 + round * 40, .cols = 300, .mean_degree = 8 + round * 10, .empty_rows = 0.2});
    std::uniform_int_distribution<vertex_t> row(0, static_cast<vertex_t>(a.rows - 1));
    std::vector<vertex_t> rows(2 * a.rows);
    std::vector<std::uint32_t> minibatch(rows.size());
    for (std::size_t i = 0; i < rows.size(); ++i) {
      rows[i] = row(gen);
      minibatch[i] = static_cast<std::uint32_t>(i % 3);
    }
    const row_streams streams{.seed = static_cast<std::uint32_t>(round),
                              .epoch = 1,
                              .layer = 2,
                              .minibatch_of_row = minibatch};
    for (const std::int64_t fanout : {1, 4, 30}) {
      const auto reference =
          sample_rows_with_shared_variates(reference_exec, a.view(), rows, streams, fanout);
      for (std::size_t i = 0; i < rows.size(); ++i) {
        std::vector<vertex_t> expected;
        const auto r = a.view().row(rows[i]);
        for (const vertex_t t : r)
          if (static_cast<std::int64_t>(r.size()) <= fanout ||
              shared_variate({static_cast<std::uint32_t>(round), 1, minibatch[i], 2, 0}, t) <
                  static_cast<double>(fanout) / static_cast<double>(r.size()))
            expected.push_back(t);
        const auto got = reference.view().row(static_cast<vertex_t>(i));
        EXPECT_EQ(std::vector<vertex_t>(got.begin(), got.end()), expected) << "row " << i;
      }
      EXPECT_TRUE(reference.values.empty());
      for (const int threads : {1, 2, 3, 5}) {
        const thread_limit limit(threads);
        testing::expect_identical(
            reference, sample_rows_with_shared_variates(cpu_exec, a.view(), rows, streams, fanout));
      }
    }
  }
}

TEST(SampleRowsWithSharedVariates, RefusesOutOfRangeRowsAndANonPositiveFanout) {
  const auto a = testing::single_row({1.0f, 2.0f});
  const std::vector<std::uint32_t> minibatch{0};
  EXPECT_THROW((void)sample_rows_with_shared_variates(cpu_exec, a.view(), std::vector<vertex_t>{1},
                                                      {.minibatch_of_row = minibatch}, 1),
               std::exception);
  EXPECT_THROW((void)sample_rows_with_shared_variates(cpu_exec, a.view(), std::vector<vertex_t>{0},
                                                      {.minibatch_of_row = minibatch}, 0),
               std::exception);
}

// Rows of `a` in `segments` segments (minibatches) of random sizes, each
// row's minibatch its segment.
struct segmented_rows {
  segmented_vertices rows;
  std::vector<std::uint32_t> minibatch;
};

segmented_rows importance_segments(std::mt19937_64& gen, std::int64_t num_rows, int segments,
                                   int rows_per_segment) {
  std::uniform_int_distribution<vertex_t> row(0, static_cast<vertex_t>(num_rows - 1));
  std::uniform_int_distribution<int> size(0, 2 * rows_per_segment);
  segmented_rows out;
  for (int m = 0; m < segments; ++m) {
    std::vector<vertex_t> segment(static_cast<std::size_t>(size(gen)));
    for (auto& v : segment) v = row(gen);
    out.rows.push_segment(segment);
    out.minibatch.insert(out.minibatch.end(), segment.size(), static_cast<std::uint32_t>(m));
  }
  return out;
}

// LABOR-i's draw: the cpu back end gives the reference's bits for any
// thread count, fanout and number of importance steps.
TEST(SampleRowsWithImportance, CpuGivesTheReferencesBitsForAnyThreadCount) {
  std::mt19937_64 gen(31);
  for (int round = 0; round < 4; ++round) {
    const auto a = testing::random_csr(
        gen,
        {.rows = 80 + round * 50, .cols = 200, .mean_degree = 6 + round * 8, .empty_rows = 0.2});
    const auto segmented = importance_segments(gen, a.rows, 5, 20);
    const row_streams streams{.seed = static_cast<std::uint32_t>(round),
                              .epoch = 3,
                              .layer = 1,
                              .minibatch_of_row = segmented.minibatch};
    for (const std::int64_t fanout : {1, 4, 30})
      for (const std::int64_t iterations : {0, 1, 3, -1}) {
        const auto reference = sample_rows_with_importance(reference_exec, a.view(), segmented.rows,
                                                           streams, fanout, iterations);
        for (const int threads : {1, 2, 3, 5}) {
          const thread_limit limit(threads);
          testing::expect_identical(
              reference, sample_rows_with_importance(cpu_exec, a.view(), segmented.rows, streams,
                                                     fanout, iterations));
        }
      }
  }
}

// With no importance step every importance is 1 and every scale fanout /
// degree: LABOR-0's draw, each kept entry weighing degree / fanout (1 in a
// row taken whole).
TEST(SampleRowsWithImportance, NoStepDrawsWhatLabor0DrawsWeighedByDegreeOverFanout) {
  std::mt19937_64 gen(32);
  const auto a = testing::random_csr(gen, {.rows = 200, .cols = 300, .mean_degree = 12});
  const auto segmented = importance_segments(gen, a.rows, 6, 30);
  const row_streams streams{
      .seed = 2, .epoch = 1, .layer = 0, .minibatch_of_row = segmented.minibatch};
  for (const std::int64_t fanout : {1, 5}) {
    const auto drawn =
        sample_rows_with_importance(cpu_exec, a.view(), segmented.rows, streams, fanout, 0);
    const auto labor0 = sample_rows_with_shared_variates(cpu_exec, a.view(),
                                                         segmented.rows.vertices, streams, fanout);
    EXPECT_EQ(drawn.indptr, labor0.indptr);
    EXPECT_EQ(drawn.indices, labor0.indices);
    for (std::int64_t i = 0; i < drawn.rows; ++i) {
      const auto degree = a.view().degree(segmented.rows.vertices[static_cast<std::size_t>(i)]);
      // degree / fanout, computed apart from the rule under test.
      const float weight =
          degree <= fanout ? 1.0f : static_cast<float>(degree) / static_cast<float>(fanout);
      for (const float w : drawn.view().row_values(static_cast<vertex_t>(i)))
        EXPECT_FLOAT_EQ(w, weight) << "row " << i;
    }
  }
}

// The scale solves Σ_t min(1, c·π_t) = fanout for any importances.
TEST(SampleRowsWithImportance, ARowsScaleMakesItsExpectedCountTheFanout) {
  std::mt19937_64 gen(33);
  std::lognormal_distribution<double> importance(0.0, 2.0);
  for (int round = 0; round < 200; ++round) {
    std::vector<double> row(static_cast<std::size_t>(2 + round % 40));
    for (auto& p : row) p = importance(gen);
    for (std::int64_t fanout = 1; fanout < std::ssize(row); ++fanout) {
      const double c = rules::labor_row_scale(row, row.size(), fanout);
      double expected = 0;
      for (const double p : row) expected += std::min(1.0, c * p);
      EXPECT_NEAR(expected, static_cast<double>(fanout), 1e-9 * static_cast<double>(fanout))
          << "round " << round << ", fanout " << fanout;
    }
  }
}

TEST(SampleRowsWithImportance, RefusesBadSegmentsCountsAndSteps) {
  const auto a = testing::single_row({1.0f, 2.0f});
  segmented_vertices rows;
  rows.push_segment(std::vector<vertex_t>{0});
  const std::vector<std::uint32_t> minibatch{0};
  const row_streams streams{.minibatch_of_row = minibatch};
  EXPECT_THROW((void)sample_rows_with_importance(cpu_exec, a.view(), rows, streams, 0, 1),
               option_error);
  EXPECT_THROW((void)sample_rows_with_importance(cpu_exec, a.view(), rows, streams, 1, -2),
               option_error);
  EXPECT_THROW((void)sample_rows_with_importance(cpu_exec, a.view(), rows, {}, 1, 1), option_error);
  segmented_vertices outside;
  outside.push_segment(std::vector<vertex_t>{1});
  EXPECT_THROW((void)sample_rows_with_importance(cpu_exec, a.view(), outside, streams, 1, 1),
               std::exception);
}

class SampleRowsDeterminism : public ::testing::Test {
 protected:
  void SetUp() override {
    std::mt19937_64 gen(17);
    a_ = testing::random_csr(gen, {.rows = 5000, .cols = 5000, .mean_degree = 20});
    rows_.resize(20000);
    minibatch_.resize(rows_.size());
    std::uniform_int_distribution<vertex_t> row(0, 4999);
    for (std::size_t i = 0; i < rows_.size(); ++i) {
      rows_[i] = row(gen);
      minibatch_[i] = static_cast<std::uint32_t>(i / 1000);
    }
  }
  csr_matrix sample(const std::vector<vertex_t>& rows, const std::vector<std::uint32_t>& minibatch,
                    const row_sampling_options& options, std::uint32_t seed = 1) const {
    return sample_rows(cpu_exec, a_.view(), rows, {.seed = seed, .minibatch_of_row = minibatch},
                       options);
  }
  csr_matrix a_;
  std::vector<vertex_t> rows_;
  std::vector<std::uint32_t> minibatch_;
};

TEST_F(SampleRowsDeterminism, SameKeyGivesSameSample) {
  for (const auto& options : every_mode(5))
    testing::expect_identical(sample(rows_, minibatch_, options),
                              sample(rows_, minibatch_, options));
}

TEST_F(SampleRowsDeterminism, DifferentSeedGivesDifferentSample) {
  const auto options = every_mode(5).front();
  EXPECT_NE(sample(rows_, minibatch_, options, 1).indices,
            sample(rows_, minibatch_, options, 2).indices);
}

TEST_F(SampleRowsDeterminism, RowSampleDoesNotDependOnOtherRowsInTheCall) {
  for (const auto& options : every_mode(5)) {
    const auto together = sample(rows_, minibatch_, options);
    for (const std::size_t i : {0ul, 777ul, 19999ul}) {
      const auto alone = sample({rows_[i]}, {minibatch_[i]}, options);
      const std::vector<vertex_t> expected(together.indices.begin() + together.indptr[i],
                                           together.indices.begin() + together.indptr[i + 1]);
      EXPECT_EQ(alone.indices, expected);
    }
  }
}

TEST_F(SampleRowsDeterminism, SampleDoesNotDependOnThreadCount) {
  for (const auto& options : every_mode(5)) {
    csr_matrix one_thread;
    {
      const thread_limit limit(1);
      one_thread = sample(rows_, minibatch_, options);
    }
    for (const int threads : {2, 3, 5}) {
      const thread_limit limit(threads);
      testing::expect_identical(one_thread, sample(rows_, minibatch_, options));
    }
  }
}

class SampleRowsArguments : public ::testing::Test {
 protected:
  csr_matrix a_ = testing::single_row({1.0f, 2.0f, 3.0f});
  std::vector<vertex_t> rows_{0};
  std::vector<std::uint32_t> minibatch_{0};
  csr_matrix call(const row_sampling_options& options, backend kind = backend::cpu) {
    return sample_rows({kind}, a_.view(), rows_, {.minibatch_of_row = minibatch_}, options);
  }
};

TEST_F(SampleRowsArguments, RejectsZeroOrNegativeFanout) {
  EXPECT_THROW(call({.fanout = 0}), option_error);
  EXPECT_THROW(call({.fanout = -2}), option_error);
}

TEST_F(SampleRowsArguments, RejectsRowOutOfRange) {
  rows_ = {1};
  EXPECT_THROW(call({.fanout = 1}), option_error);
  rows_ = {-1};
  EXPECT_THROW(call({.fanout = 1}), option_error);
}

TEST_F(SampleRowsArguments, RejectsMinibatchListOfWrongSize) {
  minibatch_ = {0, 0};
  EXPECT_THROW(call({.fanout = 1}), option_error);
}

TEST_F(SampleRowsArguments, RejectsNonPositiveOrNanWeightsForWeightedSampling) {
  for (const float bad : {0.0f, -1.0f, std::numeric_limits<float>::quiet_NaN(),
                          std::numeric_limits<float>::infinity()}) {
    a_.values[1] = bad;
    EXPECT_THROW(call({.fanout = 1, .weights = weighting::by_value}), option_error);
    EXPECT_THROW(call({.fanout = 1, .mode = replacement::with, .weights = weighting::by_value}),
                 option_error);
    EXPECT_NO_THROW(call({.fanout = 1}));
  }
}

TEST_F(SampleRowsArguments, RejectsMalformedMatrix) {
  a_.indptr = {0};
  EXPECT_THROW(call({.fanout = 1}), option_error);
}

TEST_F(SampleRowsArguments, CudaBackendSaysItIsNotCompiled) {
  EXPECT_THROW(call({.fanout = 1}, backend::cuda), error);
}

}  // namespace
}  // namespace bulkgnn::kernels
