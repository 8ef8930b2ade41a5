#include "bulkgnn/distributed/communicator.hpp"

#include <gtest/gtest.h>

#include <numeric>

namespace bulkgnn::distributed {
namespace {

TEST(Communicator, AllToAllDeliversEachRanksMessagesAndCountsOnlyOtherRanks) {
  traffic_log log;
  communicator comm(MPI_COMM_WORLD, "test", log);
  const int p = comm.size();
  const int me = comm.rank();
  // Rank r sends d + 1 copies of (100 r + d) to rank d.
  std::vector<std::vector<std::int64_t>> send(p);
  for (int d = 0; d < p; ++d) send[d].assign(d + 1, 100 * me + d);
  const auto received = comm.all_to_all(send);
  ASSERT_EQ(static_cast<int>(received.size()), p);
  for (int s = 0; s < p; ++s)
    EXPECT_EQ(received[s], std::vector<std::int64_t>(me + 1, 100 * s + me));
  const auto t = log.all().at("test");
  std::int64_t sent = 0;
  for (int d = 0; d < p; ++d)
    if (d != me) sent += 4 + 8 * (d + 1);
  EXPECT_EQ(t.bytes_sent, sent);
  EXPECT_EQ(t.bytes_received, (p - 1) * (4 + 8 * (me + 1)));
  EXPECT_EQ(t.calls, 1);
}

TEST(Communicator, StagesAreSeparateCommunicatorsAndSeparateCounts) {
  traffic_log log;
  communicator a(MPI_COMM_WORLD, "a", log);
  communicator b(MPI_COMM_WORLD, "b", log);
  int same = 0;
  MPI_Comm_compare(a.handle(), b.handle(), &same);
  EXPECT_NE(same, MPI_IDENT);
  std::vector<float> values(10, 1.0f);
  a.all_reduce_sum(std::span<float>(values));
  for (const float v : values) EXPECT_EQ(v, static_cast<float>(a.size()));
  const auto stages = log.all();
  EXPECT_EQ(stages.count("b"), 0u);
  const std::int64_t ring = 2 * (a.size() - 1) * 40 / a.size();
  EXPECT_EQ(stages.at("a").bytes_sent, ring);
}

TEST(Communicator, SplitGroupsRanksByColour) {
  traffic_log log;
  communicator world(MPI_COMM_WORLD, "world", log);
  auto halves = world.split(world.rank() % 2, world.rank(), "half");
  const auto members = halves.all_gather(world.rank());
  for (const int r : members) EXPECT_EQ(r % 2, world.rank() % 2);
  const std::vector<int> mine{world.rank(), world.rank()};
  const auto all = world.all_gather_concatenated(std::span<const int>(mine));
  ASSERT_EQ(static_cast<int>(all.size()), 2 * world.size());
  for (int r = 0; r < world.size(); ++r) EXPECT_EQ(all[2 * r + 1], r);
}

}  // namespace
}  // namespace bulkgnn::distributed
