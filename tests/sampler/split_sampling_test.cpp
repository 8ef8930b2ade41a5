// sample_slices in one process: every slice's part of a minibatch is the
// whole minibatch restricted to the slice's seeds, and the parts' digests
// merge into the whole minibatch's.
#include "bulkgnn/core/error.hpp"
#include "bulkgnn/sampler/bulk_sampler.hpp"
#include "plan_digests.hpp"
#include "program_examples.hpp"
#include "split_test_support.hpp"
#include "test_graphs.hpp"

#include <gtest/gtest.h>

#include <numeric>

namespace bulkgnn::sampler {
namespace {

using bulkgnn::testing::all_vertices;
using testing::expect_same_minibatch;
using testing::split_options_for;

class SplitSampling : public ::testing::TestWithParam<std::string> {};

// Every sampler of the table splits exactly over data-parallel ranks, and so
// do sampler programs.
INSTANTIATE_TEST_SUITE_P(Samplers, SplitSampling, ::testing::ValuesIn(sampler_names()),
                         [](const auto& info) { return testing::test_name_of(info.param); });
INSTANTIATE_TEST_SUITE_P(Programs, SplitSampling,
                         ::testing::ValuesIn(bulkgnn::testing::register_example_programs()),
                         [](const auto& info) { return testing::test_name_of(info.param); });

TEST_P(SplitSampling, EverySliceIsTheWholeMinibatchRestrictedToItsSeeds) {
  const auto g = bulkgnn::testing::random_graph(700, 3);
  const auto train = all_vertices(700);
  const auto options = split_options_for(GetParam());
  const auto plan = bulkgnn::testing::plan_for(options, g.view(), train, 50, 2);
  bulk_sampler whole_sampler(g.view(), options);
  for (const backend kind : {backend::cpu, backend::reference}) {
    bulk_sampler sampler(g.view(), options, executor{kind});
    for (const int slices : {2, 3, 7}) {
      for (std::int64_t first = 0; first < plan.num_minibatches(); first += 5) {
        const auto count = std::min<std::int64_t>(5, plan.num_minibatches() - first);
        const auto whole = whole_sampler.sample(plan, first, count);
        for (int slice = 0; slice < slices; ++slice) {
          const auto parts =
              sampler.sample_slices(plan, first, count, {.slice = slice, .slices = slices});
          ASSERT_EQ(parts.count(), count);
          for (std::int64_t j = 0; j < count; ++j) {
            const auto all = whole.extract(j);
            const auto [begin, end] =
                slice_range(static_cast<std::int64_t>(all.seeds.size()), slice, slices);
            expect_same_minibatch(parts.extract(j), restrict_to_seeds(all, begin, end),
                                  fmt::format("{} slice {} of {}, minibatch {}", backend_name(kind),
                                              slice, slices, first + j));
          }
        }
      }
    }
  }
}

TEST_P(SplitSampling, DigestsMergedFromTheSlicesAreTheWholeMinibatchDigests) {
  const auto g = bulkgnn::testing::random_graph(600, 4);
  const auto train = all_vertices(600);
  const auto options = split_options_for(GetParam());
  const auto plan = bulkgnn::testing::plan_for(options, g.view(), train, 40, 1);
  bulk_sampler sampler(g.view(), options);
  const auto whole = sampler.sample(plan, 0, plan.num_minibatches());
  const auto hops = static_cast<std::int64_t>(options.fanouts.size());
  for (const int slices : {1, 2, 5}) {
    std::vector<std::vector<destination_edges>> by_minibatch(
        static_cast<std::size_t>(plan.num_minibatches()));
    for (int slice = 0; slice < slices; ++slice) {
      const auto parts = sampler.sample_slices(plan, 0, plan.num_minibatches(),
                                               {.slice = slice, .slices = slices});
      for (std::int64_t j = 0; j < parts.count(); ++j) {
        const auto d = parts.destinations(j);
        by_minibatch[j].insert(by_minibatch[j].end(), d.begin(), d.end());
      }
    }
    for (std::int64_t j = 0; j < plan.num_minibatches(); ++j)
      EXPECT_EQ(merge_digest(plan.seeds(j), hops, by_minibatch[j]), whole.digest(j))
          << slices << " slices, minibatch " << j;
  }
}

// -1 takes every column the distribution reaches, split or whole.
TEST(SplitSampling, FanoutMinusOneTakesEveryColumnAsTheWholeSampleDoes) {
  const auto g = bulkgnn::testing::random_graph(300, 9);
  const auto train = all_vertices(300);
  const epoch_plan plan(train, 20, 0, 4);
  for (const std::string kind : {"ladies", "fastgcn"}) {
    bulk_sampler sampler(g.view(), {.kind = kind, .fanouts = {-1, 5}, .seed = 2});
    const auto whole = sampler.sample(plan, 0, 3);
    for (int slice = 0; slice < 3; ++slice) {
      const auto parts = sampler.sample_slices(plan, 0, 3, {.slice = slice, .slices = 3});
      for (std::int64_t j = 0; j < 3; ++j) {
        const auto all = whole.extract(j);
        const auto [begin, end] =
            slice_range(static_cast<std::int64_t>(all.seeds.size()), slice, 3);
        expect_same_minibatch(parts.extract(j), restrict_to_seeds(all, begin, end),
                              fmt::format("{} slice {}, minibatch {}", kind, slice, j));
      }
    }
  }
}

TEST(MergeDigest, RefusesPartsThatGiveADestinationDifferentEdges) {
  const std::vector<vertex_t> seeds{3};
  std::vector<destination_edges> parts{
      {.minibatch = 0, .hop = 0, .destination = 3, .count = 2, .sum = 10},
      {.minibatch = 0, .hop = 0, .destination = 3, .count = 2, .sum = 11}};
  EXPECT_THROW((void)merge_digest(seeds, 1, parts), option_error);
  parts[1].sum = 10;
  EXPECT_NO_THROW((void)merge_digest(seeds, 1, parts));
}

TEST(SplitSampling, RefusesASliceThatDoesNotExist) {
  const auto g = bulkgnn::testing::random_graph(100, 5);
  const auto train = all_vertices(100);
  const epoch_plan plan(train, 10, 0, 0);
  bulk_sampler sampler(g.view(), split_options_for("ladies"));
  for (const auto& [slice, slices] : {std::pair{2, 2}, std::pair{-1, 3}, std::pair{0, 0}})
    EXPECT_THROW((void)sampler.sample_slices(plan, 0, 1, {.slice = slice, .slices = slices}),
                 option_error)
        << slice << " of " << slices;
}

TEST(SliceRange, SlicesAreContiguousNearlyEqualAndCoverEverySeed) {
  for (const std::int64_t seeds : {0, 1, 5, 1024, 1031})
    for (const int slices : {1, 2, 3, 8}) {
      std::int64_t next = 0;
      for (int slice = 0; slice < slices; ++slice) {
        const auto [begin, end] = slice_range(seeds, slice, slices);
        EXPECT_EQ(begin, next);
        EXPECT_LE(end - begin, seeds / slices + 1);
        EXPECT_GE(end - begin, seeds / slices);
        next = end;
      }
      EXPECT_EQ(next, seeds);
    }
}

}  // namespace
}  // namespace bulkgnn::sampler
