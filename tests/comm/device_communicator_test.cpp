#include "bulkgnn/comm/device_communicator.hpp"

#include "bulkgnn/comm/self_communicator.hpp"
#include "bulkgnn/core/error.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

namespace bulkgnn::comm {
namespace {

TEST(DeviceCommunicator, ARankOnTheHostOwnsNoGpu) {
  traffic_log log;
  self_communicator self("self", log);
  EXPECT_FALSE(every_rank_owns_a_gpu(self, executor(backend::cpu)));
}

TEST(DeviceCommunicator, NcclRefusesAHostExecutorWithAClearMessage) {
  traffic_log log;
  self_communicator self("self", log);
  try {
    (void)make_nccl_communicator(self, executor(backend::cpu));
    FAIL() << "a host executor was accepted";
  } catch (const error& e) {
    const std::string message = e.what();
    EXPECT_NE(message.find("make_nccl_communicator"), std::string::npos) << message;
    EXPECT_NE(message.find(nccl_compiled() ? "no GPU" : "no NCCL"), std::string::npos) << message;
  }
}

TEST(DeviceCommunicator, TheHostOneCarriesItsCallsOverTheCommunicator) {
  traffic_log log;
  self_communicator self("features", log);
  const auto host = make_host_communicator(self);
  EXPECT_STREQ(host->name(), "MPI");
  std::vector<float> values{1.5F, -2.0F, 0.25F};
  host->all_reduce_sum(values);
  EXPECT_EQ(values, (std::vector<float>{1.5F, -2.0F, 0.25F}));
  const std::vector<std::int64_t> counts{3};
  std::vector<float> received(3, 0.0F);
  host->all_to_all(values, counts, received, counts);
  EXPECT_EQ(received, values);
  EXPECT_EQ(log.all().at("features").calls, 2);
  EXPECT_EQ(log.all().at("features").bytes_sent, 0) << "a rank's part for itself is not traffic";
}

}  // namespace
}  // namespace bulkgnn::comm
