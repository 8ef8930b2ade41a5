// Every collective of mpi_communicator at 1, 2 and 4 ranks: what arrives,
// and the exact bytes the traffic log counts (communicator.hpp's rules).
#include "bulkgnn/comm/mpi_communicator.hpp"

#include "test_codec.hpp"

#include <gtest/gtest.h>

#include <numeric>

namespace bulkgnn::comm {
namespace {

traffic counted(const traffic_log& log, const std::string& stage) {
  const auto all = log.all();
  const auto found = all.find(stage);
  return found == all.end() ? traffic{} : found->second;
}

TEST(Communicator, AllToAllDeliversEachRanksMessagesAndCountsOnlyOtherRanks) {
  traffic_log log;
  mpi_communicator comm(MPI_COMM_WORLD, "test", log);
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

TEST(Communicator, AllToAllWithCountsMovesEachPartAndCountsOnlyItsBytes) {
  traffic_log log;
  mpi_communicator comm(MPI_COMM_WORLD, "counts", log);
  const int p = comm.size();
  const int me = comm.rank();
  // Rank r sends r + 1 floats of value r + d / 10 to rank d.
  std::vector<float> send;
  std::vector<std::int64_t> send_counts(p, me + 1), receive_counts(p);
  for (int d = 0; d < p; ++d) send.insert(send.end(), me + 1, static_cast<float>(me) + d / 10.0f);
  std::int64_t expected_received = 0;
  for (int s = 0; s < p; ++s) {
    receive_counts[s] = s + 1;
    if (s != me) expected_received += 4 * (s + 1);
  }
  std::vector<float> receive(static_cast<std::size_t>(p * (p + 1) / 2));
  comm.all_to_all(std::span<const float>(send), send_counts, std::span<float>(receive),
                  receive_counts);
  std::size_t at = 0;
  for (int s = 0; s < p; ++s)
    for (int i = 0; i <= s; ++i) EXPECT_EQ(receive[at++], static_cast<float>(s) + me / 10.0f);
  const auto t = counted(log, "counts");
  EXPECT_EQ(t.bytes_sent, (p - 1) * 4 * (me + 1));
  EXPECT_EQ(t.bytes_received, expected_received);
  EXPECT_EQ(t.calls, 1);
}

TEST(Communicator, StagesAreSeparateCommunicatorsAndSeparateCounts) {
  traffic_log log;
  mpi_communicator a(MPI_COMM_WORLD, "a", log);
  mpi_communicator b(MPI_COMM_WORLD, "b", log);
  int same = 0;
  MPI_Comm_compare(a.handle(), b.handle(), &same);
  EXPECT_NE(same, MPI_IDENT);
  std::vector<float> values(10, 1.0f);
  a.all_reduce(std::span<float>(values));
  for (const float v : values) EXPECT_EQ(v, static_cast<float>(a.size()));
  const auto stages = log.all();
  EXPECT_EQ(stages.count("b"), 0u);
  const std::int64_t ring = 2 * (a.size() - 1) * 40 / a.size();
  EXPECT_EQ(stages.at("a").bytes_sent, ring);
}

TEST(Communicator, AllReduceSumsMaximaAndMinimaAndCountsTheRing) {
  traffic_log log;
  mpi_communicator comm(MPI_COMM_WORLD, "reduce", log);
  const int p = comm.size();
  const int me = comm.rank();
  std::vector<std::int64_t> sums{me, 2 * me, 1};
  comm.all_reduce(std::span<std::int64_t>(sums));
  const std::int64_t ranks_sum = p * (p - 1) / 2;
  EXPECT_EQ(sums, (std::vector<std::int64_t>{ranks_sum, 2 * ranks_sum, p}));
  EXPECT_EQ(comm.all_reduce(static_cast<double>(me) - 0.5, reduce_op::max), p - 1.5);
  EXPECT_EQ(comm.all_reduce(static_cast<std::uint32_t>(me + 3), reduce_op::min), 3u);
  const auto t = counted(log, "reduce");
  const std::int64_t expected = 2 * (p - 1) * 24 / p + 2 * (p - 1) * 8 / p + 2 * (p - 1) * 4 / p;
  EXPECT_EQ(t.bytes_sent, expected);
  EXPECT_EQ(t.bytes_received, expected);
  EXPECT_EQ(t.calls, 3);
}

TEST(Communicator, ReduceScatterGivesEachRankItsBlockOfTheSum) {
  traffic_log log;
  mpi_communicator comm(MPI_COMM_WORLD, "scatter", log);
  const int p = comm.size();
  const int me = comm.rank();
  constexpr int block = 3;
  // Element i of rank r's input is r + i.
  std::vector<double> send(static_cast<std::size_t>(p * block));
  std::iota(send.begin(), send.end(), static_cast<double>(me));
  std::vector<double> receive(block);
  comm.reduce_scatter(std::span<const double>(send), std::span<double>(receive));
  for (int i = 0; i < block; ++i)
    EXPECT_EQ(receive[i], static_cast<double>(p * (me * block + i) + p * (p - 1) / 2));
  const auto t = counted(log, "scatter");
  EXPECT_EQ(t.bytes_sent, (p - 1) * block * 8);
  EXPECT_EQ(t.bytes_received, (p - 1) * block * 8);
}

// Blocks of unequal sizes: rank r's block has r + 1 elements.
TEST(Communicator, ReduceScatterOfSizedBlocksGivesEachRankItsBlockOfTheSum) {
  traffic_log log;
  mpi_communicator comm(MPI_COMM_WORLD, "scatter", log);
  const int p = comm.size();
  const int me = comm.rank();
  std::vector<std::int64_t> counts;
  for (int r = 0; r < p; ++r) counts.push_back(r + 1);
  const auto total = std::accumulate(counts.begin(), counts.end(), std::int64_t{0});
  // Element i of rank r's input is r + i.
  std::vector<float> send(static_cast<std::size_t>(total));
  std::iota(send.begin(), send.end(), static_cast<float>(me));
  std::vector<float> receive(static_cast<std::size_t>(me + 1));
  comm.reduce_scatter(std::span<const float>(send), std::span<float>(receive), counts);
  const std::int64_t start = me * (me + 1) / 2;
  for (int i = 0; i <= me; ++i)
    EXPECT_EQ(receive[i], static_cast<float>(p * (start + i) + p * (p - 1) / 2));
  const auto t = counted(log, "scatter");
  EXPECT_EQ(t.bytes_sent, (total - (me + 1)) * 4);
  EXPECT_EQ(t.bytes_received, (total - (me + 1)) * 4);
  EXPECT_THROW(
      comm.reduce_scatter(std::span<const float>(send), std::span<float>(receive).first(0), counts),
      bulkgnn::option_error);
}

// Counts every rank knows: no sizes travel, each rank's bytes go to the others.
TEST(Communicator, AllGatherWithKnownCountsPlacesEachRanksElementsInRankOrder) {
  traffic_log log;
  mpi_communicator comm(MPI_COMM_WORLD, "gather", log);
  const int p = comm.size();
  const int me = comm.rank();
  std::vector<std::int64_t> counts;
  for (int r = 0; r < p; ++r) counts.push_back(2 * r);
  const std::vector<std::int64_t> mine(static_cast<std::size_t>(2 * me), me);
  std::vector<std::int64_t> all(static_cast<std::size_t>(p * (p - 1)));
  comm.all_gather_v(std::span<const std::int64_t>(mine), std::span<std::int64_t>(all), counts);
  std::size_t next = 0;
  for (int r = 0; r < p; ++r)
    for (int i = 0; i < 2 * r; ++i) EXPECT_EQ(all[next++], r);
  const auto t = counted(log, "gather");
  EXPECT_EQ(t.calls, 1);
  EXPECT_EQ(t.bytes_sent, (p - 1) * 2 * me * 8);
  EXPECT_EQ(t.bytes_received, (p * (p - 1) - 2 * me) * 8);
}

TEST(Communicator, SplitGroupsRanksByColour) {
  traffic_log log;
  mpi_communicator world(MPI_COMM_WORLD, "world", log);
  const auto halves = world.split(world.rank() % 2, world.rank(), "half");
  const auto members = halves->all_gather(world.rank());
  for (const int r : members) EXPECT_EQ(r % 2, world.rank() % 2);
  EXPECT_EQ(halves->stage(), "half");
  EXPECT_EQ(counted(log, "half").calls, 1);
  const std::vector<int> mine{world.rank(), world.rank()};
  const auto all = world.all_gather_v(std::span<const int>(mine));
  ASSERT_EQ(static_cast<int>(all.size()), 2 * world.size());
  for (int r = 0; r < world.size(); ++r) EXPECT_EQ(all[2 * r + 1], r);
}

TEST(Communicator, AllGatherOfFixedAndVariableSizesCountsOtherRanksContributions) {
  traffic_log log;
  mpi_communicator comm(MPI_COMM_WORLD, "gather", log);
  const int p = comm.size();
  const int me = comm.rank();
  const std::vector<std::int32_t> pair{me, -me};
  const auto pairs = comm.all_gather(std::span<const std::int32_t>(pair));
  for (int r = 0; r < p; ++r) {
    EXPECT_EQ(pairs[2 * r], r);
    EXPECT_EQ(pairs[2 * r + 1], -r);
  }
  auto t = counted(log, "gather");
  EXPECT_EQ(t.bytes_sent, (p - 1) * 8);
  EXPECT_EQ(t.bytes_received, (p - 1) * 8);
  // Rank r gives r + 1 doubles: the sizes travel first, in a call of their own.
  const std::vector<double> mine(me + 1, me);
  const auto all = comm.all_gather_v(std::span<const double>(mine));
  ASSERT_EQ(static_cast<int>(all.size()), p * (p + 1) / 2);
  std::size_t at = 0;
  for (int r = 0; r < p; ++r)
    for (int i = 0; i <= r; ++i) EXPECT_EQ(all[at++], r);
  t = counted(log, "gather");
  const std::int64_t others = 8 * (p * (p + 1) / 2 - (me + 1));
  EXPECT_EQ(t.bytes_sent, (p - 1) * 8 + (p - 1) * 8 + others);
  EXPECT_EQ(t.bytes_received, t.bytes_sent);
  EXPECT_EQ(t.calls, 3);
}

TEST(Communicator, BroadcastCopiesTheRootsValuesAlongAChain) {
  const int p = [] {
    int size = 1;
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    return size;
  }();
  for (int root = 0; root < p; ++root) {
    traffic_log log;
    mpi_communicator comm(MPI_COMM_WORLD, "broadcast", log);
    std::vector<std::int64_t> values(5, comm.rank() == root ? 1000 + root : -1);
    comm.broadcast(std::span<std::int64_t>(values), root);
    EXPECT_EQ(values, std::vector<std::int64_t>(5, 1000 + root));
    const auto t = counted(log, "broadcast");
    const int last_in_chain = (root + p - 1) % p;
    EXPECT_EQ(t.bytes_received, comm.rank() == root ? 0 : 40);
    EXPECT_EQ(t.bytes_sent, p > 1 && comm.rank() != last_in_chain ? 40 : 0);
  }
}

TEST(Communicator, SendAndReceivePassMessagesAroundARing) {
  traffic_log log;
  mpi_communicator comm(MPI_COMM_WORLD, "ring", log);
  const int p = comm.size();
  if (p < 2) GTEST_SKIP() << "a blocking ring needs two ranks";
  const int me = comm.rank();
  const int next = (me + 1) % p, previous = (me + p - 1) % p;
  const std::vector<float> mine(4, static_cast<float>(me));
  std::vector<float> theirs(4);
  // Even ranks send first, odd ranks receive first: blocking calls cannot
  // all wait on each other.
  if (me % 2 == 0) {
    comm.send(std::span<const float>(mine), next, 5);
    comm.receive(std::span<float>(theirs), previous, 5);
  } else {
    comm.receive(std::span<float>(theirs), previous, 5);
    comm.send(std::span<const float>(mine), next, 5);
  }
  EXPECT_EQ(theirs, std::vector<float>(4, static_cast<float>(previous)));
  const auto t = counted(log, "ring");
  EXPECT_EQ(t.bytes_sent, 16);
  EXPECT_EQ(t.bytes_received, 16);
  EXPECT_EQ(t.calls, 2);
}

TEST(Communicator, NonBlockingCallsCountTheirTrafficWhenTheyComplete) {
  traffic_log log;
  mpi_communicator comm(MPI_COMM_WORLD, "async", log);
  const int p = comm.size();
  const int me = comm.rank();
  std::vector<double> sums(6, 1.0);
  auto reducing = comm.all_reduce_async(std::span<double>(sums));
  EXPECT_EQ(counted(log, "async").calls, 0);
  reducing.wait();
  EXPECT_EQ(sums, std::vector<double>(6, p));
  EXPECT_EQ(counted(log, "async").bytes_sent, 2 * (p - 1) * 48 / p);

  const int next = (me + 1) % p, previous = (me + p - 1) % p;
  std::vector<std::int32_t> theirs(3, -1);
  const std::vector<std::int32_t> mine(3, me);
  auto receiving = comm.irecv(std::span<std::int32_t>(theirs), previous, 9);
  auto sending = comm.isend(std::span<const std::int32_t>(mine), next, 9);
  while (!receiving.test()) {
  }
  sending.wait();
  EXPECT_TRUE(receiving.done() && sending.done());
  EXPECT_EQ(theirs, std::vector<std::int32_t>(3, previous));
  const auto t = counted(log, "async");
  const std::int64_t neighbour_bytes = p > 1 ? 12 : 0;
  EXPECT_EQ(t.bytes_sent, 2 * (p - 1) * 48 / p + neighbour_bytes);
  EXPECT_EQ(t.bytes_received, 2 * (p - 1) * 48 / p + neighbour_bytes);
  EXPECT_EQ(t.calls, 3);
}

TEST(Communicator, BarrierCountsACallAndNoBytes) {
  traffic_log log;
  mpi_communicator comm(MPI_COMM_WORLD, "barrier", log);
  comm.barrier();
  const auto t = counted(log, "barrier");
  EXPECT_EQ(t.calls, 1);
  EXPECT_EQ(t.bytes_sent + t.bytes_received, 0);
}

TEST(Communicator, CodecEncodesEveryMessageAndTrafficCountsEncodedBytes) {
  traffic_log log;
  mpi_communicator comm(MPI_COMM_WORLD, "codec", log);
  const int p = comm.size();
  const int me = comm.rank();
  const testing::marking_codec wire;
  constexpr std::int64_t extra = testing::marking_codec::overhead;

  std::vector<std::vector<float>> send(p);
  for (int d = 0; d < p; ++d) send[d].assign(d + 1, static_cast<float>(me * 10 + d));
  const auto received = comm.all_to_all(send, wire);
  for (int s = 0; s < p; ++s)
    EXPECT_EQ(received[s], std::vector<float>(me + 1, static_cast<float>(s * 10 + me)));
  EXPECT_EQ(wire.encoded, p);
  EXPECT_EQ(wire.decoded, p);
  EXPECT_EQ(wire.last_element_bytes, sizeof(float));
  auto t = counted(log, "codec");
  std::int64_t sent = 0;
  for (int d = 0; d < p; ++d)
    if (d != me) sent += 4 + 4 * (d + 1) + extra;
  EXPECT_EQ(t.bytes_sent, sent);
  EXPECT_EQ(t.bytes_received, (p - 1) * (4 + 4 * (me + 1) + extra));

  traffic_log gather_log;
  mpi_communicator gather(MPI_COMM_WORLD, "gather", gather_log);
  const std::vector<std::int64_t> mine(me + 1, me);
  const auto all = gather.all_gather_v(std::span<const std::int64_t>(mine), wire);
  ASSERT_EQ(static_cast<int>(all.size()), p * (p + 1) / 2);
  EXPECT_EQ(all.back(), p - 1);
  EXPECT_EQ(wire.encoded, p + 1);
  EXPECT_EQ(wire.decoded, 2 * p);
  t = counted(gather_log, "gather");
  const std::int64_t everyone = 8 * (p * (p + 1) / 2) + p * extra;
  const std::int64_t others = everyone - (8 * (me + 1) + extra);
  EXPECT_EQ(t.bytes_sent, (p - 1) * 8 + others);

  traffic_log broadcast_log;
  mpi_communicator broadcast(MPI_COMM_WORLD, "broadcast", broadcast_log);
  std::vector<double> values(3, me == 0 ? 2.5 : 0.0);
  broadcast.broadcast(std::span<double>(values), 0, wire);
  EXPECT_EQ(values, std::vector<double>(3, 2.5));
  t = counted(broadcast_log, "broadcast");
  EXPECT_EQ(t.bytes_received, me == 0 ? 0 : 24 + extra + 8);

  if (p > 1) {
    traffic_log ring_log;
    mpi_communicator ring(MPI_COMM_WORLD, "ring", ring_log);
    const std::vector<std::int32_t> payload(2, me);
    std::vector<std::int32_t> theirs(2);
    const int next = (me + 1) % p, previous = (me + p - 1) % p;
    if (me % 2 == 0) {
      ring.send(std::span<const std::int32_t>(payload), next, 1, wire);
      ring.receive(std::span<std::int32_t>(theirs), previous, 1, wire);
    } else {
      ring.receive(std::span<std::int32_t>(theirs), previous, 1, wire);
      ring.send(std::span<const std::int32_t>(payload), next, 1, wire);
    }
    EXPECT_EQ(theirs, std::vector<std::int32_t>(2, previous));
    t = counted(ring_log, "ring");
    EXPECT_EQ(t.bytes_sent, 8 + extra);
    EXPECT_EQ(t.bytes_received, 8 + extra);
  }
}

TEST(Communicator, ElementsOfAnySizeTravelWhole) {
  struct triple {
    std::int16_t a;
    std::int16_t b;
    std::int16_t c;
  };
  static_assert(sizeof(triple) == 6);
  traffic_log log;
  mpi_communicator comm(MPI_COMM_WORLD, "odd", log);
  const int p = comm.size();
  const int me = comm.rank();
  std::vector<std::vector<triple>> send(p);
  for (int d = 0; d < p; ++d)
    send[d].push_back(triple{static_cast<std::int16_t>(me), static_cast<std::int16_t>(d), 7});
  const auto received = comm.all_to_all(send);
  for (int s = 0; s < p; ++s) {
    ASSERT_EQ(received[s].size(), 1u);
    EXPECT_EQ(received[s][0].a, s);
    EXPECT_EQ(received[s][0].b, me);
    EXPECT_EQ(received[s][0].c, 7);
  }
  EXPECT_EQ(counted(log, "odd").bytes_sent, (p - 1) * (4 + 6));
}

}  // namespace
}  // namespace bulkgnn::comm
