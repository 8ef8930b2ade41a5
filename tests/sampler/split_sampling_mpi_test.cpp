// sample_slices over MPI ranks: each rank computes its columns of the
// layer-wise distribution and its part of every minibatch, and that part is
// the whole minibatch restricted to the rank's seeds, bit for bit; the digests
// merged over the ranks are the whole minibatches'.
#include "bulkgnn/comm/mpi_communicator.hpp"
#include "bulkgnn/sampler/bulk_sampler.hpp"
#include "bulkgnn/sampler/part_digests.hpp"
#include "split_test_support.hpp"
#include "test_graphs.hpp"

#include <gtest/gtest.h>

#include <numeric>

namespace bulkgnn::sampler {
namespace {

using testing::expect_same_minibatch;
using testing::split_options_for;

class SplitSamplingOverRanks : public ::testing::TestWithParam<std::string> {};

INSTANTIATE_TEST_SUITE_P(Samplers, SplitSamplingOverRanks,
                         ::testing::Values(std::string("sage"), std::string("ladies"),
                                           std::string("fastgcn")),
                         [](const auto& info) { return info.param; });

TEST_P(SplitSamplingOverRanks, EachRanksPartIsTheWholeMinibatchRestrictedToItsSeeds) {
  comm::traffic_log log;
  comm::mpi_communicator ranks(MPI_COMM_WORLD, "sampling", log);
  const auto g = bulkgnn::testing::random_graph(700, 8);
  std::vector<vertex_t> train(700);
  std::iota(train.begin(), train.end(), 0);
  const epoch_plan plan(train, 45, 0, 1);
  const auto options = split_options_for(GetParam());
  bulk_sampler sampler(g.view(), options);
  const minibatch_split split{.slice = ranks.rank(), .slices = ranks.size(), .ranks = &ranks};
  const auto hops = static_cast<std::int64_t>(options.fanouts.size());
  for (std::int64_t first = 0; first < plan.num_minibatches(); first += 6) {
    const auto count = std::min<std::int64_t>(6, plan.num_minibatches() - first);
    const auto parts = sampler.sample_slices(plan, first, count, split);
    const auto whole = sampler.sample(plan, first, count);
    std::vector<destination_edges> mine;
    for (std::int64_t j = 0; j < count; ++j) {
      const auto all = whole.extract(j);
      const auto [begin, end] =
          slice_range(static_cast<std::int64_t>(all.seeds.size()), split.slice, split.slices);
      // One slice is the whole minibatch, as sample() numbers it.
      expect_same_minibatch(
          parts.extract(j), split.slices == 1 ? all : restrict_to_seeds(all, begin, end),
          fmt::format("rank {} of {}, minibatch {}", split.slice, split.slices, first + j));
      const auto d = parts.destinations(j);
      mine.insert(mine.end(), d.begin(), d.end());
    }
    for (const auto& [id, digest] : merge_part_digests(ranks, plan, hops, mine)) {
      EXPECT_EQ(id % ranks.size(), ranks.rank());
      EXPECT_EQ(digest, whole.digest(id - first)) << "minibatch " << id;
    }
  }
}

}  // namespace
}  // namespace bulkgnn::sampler
