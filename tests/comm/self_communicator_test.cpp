#include "bulkgnn/comm/self_communicator.hpp"

#include "test_codec.hpp"

#include <gtest/gtest.h>

#include <numeric>
#include <string>
#include <vector>

namespace bulkgnn::comm {
namespace {

// Every call counted once, with no bytes: one rank has no one to talk to.
void expect_calls_without_bytes(const traffic_log& log, const std::string& stage,
                                std::int64_t calls) {
  const auto t = log.all().at(stage);
  EXPECT_EQ(t.bytes_sent, 0);
  EXPECT_EQ(t.bytes_received, 0);
  EXPECT_EQ(t.calls, calls);
}

TEST(SelfCommunicator, IsRankZeroOfOne) {
  traffic_log log;
  self_communicator self("self", log);
  EXPECT_EQ(self.rank(), 0);
  EXPECT_EQ(self.size(), 1);
  EXPECT_EQ(self.stage(), "self");
}

TEST(SelfCommunicator, CollectivesReturnThisRanksOwnData) {
  traffic_log log;
  self_communicator self("self", log);
  const std::vector<std::vector<std::int64_t>> parts{{1, 2, 3}};
  EXPECT_EQ(self.all_to_all(parts), parts);

  const std::vector<float> send{1.5f, 2.5f};
  std::vector<float> receive(2);
  const std::vector<std::int64_t> counts{2};
  self.all_to_all(std::span<const float>(send), counts, std::span<float>(receive), counts);
  EXPECT_EQ(receive, send);

  std::vector<double> values{1.0, -2.0};
  self.all_reduce(std::span<double>(values), reduce_op::sum);
  EXPECT_EQ(values, (std::vector<double>{1.0, -2.0}));
  EXPECT_EQ(self.all_reduce(7, reduce_op::max), 7);

  std::vector<std::int32_t> block(2);
  const std::vector<std::int32_t> whole{4, 5};
  self.reduce_scatter(std::span<const std::int32_t>(whole), std::span<std::int32_t>(block));
  EXPECT_EQ(block, whole);

  EXPECT_EQ(self.all_gather(42), std::vector<int>{42});
  const std::vector<char> text{'a', 'b'};
  EXPECT_EQ(self.all_gather(std::span<const char>(text)), text);
  EXPECT_EQ(self.all_gather_v(std::span<const char>(text)), text);

  std::vector<int> root_values{9, 8};
  self.broadcast(std::span<int>(root_values), 0);
  EXPECT_EQ(root_values, (std::vector<int>{9, 8}));
  self.barrier();
  // all_gather_v gathers its sizes in a call of its own.
  expect_calls_without_bytes(log, "self", 11);
}

TEST(SelfCommunicator, MessagesToItselfWaitInAMailboxByTag) {
  traffic_log log;
  self_communicator self("p2p", log);
  const std::vector<int> first{1, 2}, second{3};
  self.send(std::span<const int>(first), 0, 7);
  self.send(std::span<const int>(second), 0, 8);
  std::vector<int> got_second(1), got_first(2);
  self.receive(std::span<int>(got_second), 0, 8);
  self.receive(std::span<int>(got_first), 0, 7);
  EXPECT_EQ(got_first, first);
  EXPECT_EQ(got_second, second);
  expect_calls_without_bytes(log, "p2p", 4);
}

TEST(SelfCommunicator, ReceiveWithoutASendFailsInsteadOfWaitingForever) {
  traffic_log log;
  self_communicator self("p2p", log);
  std::vector<int> values(1);
  try {
    self.receive(std::span<int>(values), 0, 3);
    FAIL() << "expected an error";
  } catch (const error& e) {
    EXPECT_NE(std::string(e.what()).find("self_communicator::receive"), std::string::npos);
    EXPECT_NE(std::string(e.what()).find("tag 3"), std::string::npos);
  }
}

TEST(SelfCommunicator, PostedReceiveCompletesWhenItsSendArrives) {
  traffic_log log;
  self_communicator self("async", log);
  std::vector<double> into(3, 0.0);
  auto receiving = self.irecv(std::span<double>(into), 0, 1);
  EXPECT_FALSE(receiving.test());
  const std::vector<double> values{1, 2, 3};
  auto sending = self.isend(std::span<const double>(values), 0, 1);
  EXPECT_TRUE(sending.test());
  receiving.wait();
  EXPECT_TRUE(receiving.done());
  EXPECT_EQ(into, values);
  std::vector<float> sums{1.0f};
  auto reducing = self.all_reduce_async(std::span<float>(sums));
  reducing.wait();
  EXPECT_EQ(sums[0], 1.0f);
  expect_calls_without_bytes(log, "async", 3);
}

TEST(SelfCommunicator, CodecEncodesAndDecodesEveryMessage) {
  traffic_log log;
  self_communicator self("codec", log);
  const testing::marking_codec wire;
  const std::vector<std::vector<std::int32_t>> parts{{5, 6, 7}};
  EXPECT_EQ(self.all_to_all(parts, wire), parts);
  EXPECT_EQ(wire.encoded, 1);
  EXPECT_EQ(wire.decoded, 1);
  EXPECT_EQ(wire.last_element_bytes, sizeof(std::int32_t));
  const std::vector<double> values{0.25, 0.5};
  EXPECT_EQ(self.all_gather_v(std::span<const double>(values), wire), values);
  self.send(std::span<const double>(values), 0, 0, wire);
  std::vector<double> received(2);
  self.receive(std::span<double>(received), 0, 0, wire);
  EXPECT_EQ(received, values);
  EXPECT_EQ(wire.encoded, 3);
  EXPECT_EQ(wire.decoded, 3);
}

TEST(SelfCommunicator, SplitAndDuplicateCountUnderTheirOwnStage) {
  traffic_log log, other;
  self_communicator self("parent", log);
  const auto part = self.split(3, 0, "part");
  const auto copy = self.duplicate("copy", other);
  part->barrier();
  copy->barrier();
  EXPECT_EQ(log.all().count("parent"), 0u);
  EXPECT_EQ(log.all().at("part").calls, 1);
  EXPECT_EQ(other.all().at("copy").calls, 1);
}

TEST(SelfCommunicator, ViewsInHostMemoryAreReachedAndDeviceViewsRefusedByName) {
  traffic_log log;
  self_communicator self("spaces", log);
  std::vector<float> values{1.0f, 2.0f, 3.0f, 4.0f};
  const dense_view<float> host{2, 2, values};
  self.all_reduce(host);
  self.broadcast(host, 0);
  self.send(dense_view<const float>(host), 0, 4);
  self.receive(host, 0, 4);
  self.all_reduce_async(dense_view<float>{2, 2, values, memory_space::pinned_host}).wait();
  EXPECT_EQ(values, (std::vector<float>{1.0f, 2.0f, 3.0f, 4.0f}));
  EXPECT_TRUE(self.reaches(memory_space::pinned_host));
  EXPECT_FALSE(self.reaches(memory_space::device));

  const dense_view<float> device{2, 2, values, memory_space::device};
  const auto refuses = [](const auto& call, const std::string& name) {
    try {
      call();
      ADD_FAILURE() << name << " took a device view";
    } catch (const option_error& e) {
      EXPECT_NE(std::string(e.what()).find("comm::" + name + ":"), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find("device memory"), std::string::npos) << e.what();
    }
  };
  refuses([&] { self.all_reduce(device); }, "all_reduce");
  refuses([&] { std::ignore = self.all_reduce_async(device); }, "all_reduce_async");
  refuses([&] { self.broadcast(device, 0); }, "broadcast");
  refuses([&] { self.send(dense_view<const float>(device), 0, 1); }, "send");
  refuses([&] { self.receive(device, 0, 1); }, "receive");
}

TEST(SelfCommunicator, ArgumentErrorsNameTheCall) {
  traffic_log log;
  self_communicator self("errors", log);
  const std::vector<std::vector<int>> two_parts(2);
  EXPECT_THROW(
      {
        try {
          std::ignore = self.all_to_all(two_parts);
        } catch (const option_error& e) {
          EXPECT_NE(std::string(e.what()).find("comm::all_to_all"), std::string::npos);
          throw;
        }
      },
      option_error);
  std::vector<int> values(1);
  EXPECT_THROW(self.broadcast(std::span<int>(values), 1), option_error);
  EXPECT_THROW(self.send(std::span<const int>(values), 0, -1), option_error);
  std::vector<int> block(2);
  EXPECT_THROW(self.reduce_scatter(std::span<const int>(values), std::span<int>(block)),
               option_error);
}

}  // namespace
}  // namespace bulkgnn::comm
