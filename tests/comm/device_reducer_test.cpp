#include "bulkgnn/comm/device_reducer.hpp"

#include "bulkgnn/comm/self_communicator.hpp"
#include "bulkgnn/core/error.hpp"

#include <gtest/gtest.h>

namespace bulkgnn::comm {
namespace {

TEST(DeviceReducer, ARankOnTheHostOwnsNoGpu) {
  traffic_log log;
  self_communicator self("self", log);
  EXPECT_FALSE(every_rank_owns_a_gpu(self, executor(backend::cpu)));
}

TEST(DeviceReducer, NcclRefusesAHostExecutorWithAClearMessage) {
  traffic_log log;
  self_communicator self("self", log);
  try {
    (void)make_nccl_reducer(self, executor(backend::cpu));
    FAIL() << "a host executor was accepted";
  } catch (const error& e) {
    const std::string message = e.what();
    EXPECT_NE(message.find("make_nccl_reducer"), std::string::npos) << message;
    EXPECT_NE(message.find(nccl_compiled() ? "no GPU" : "no NCCL"), std::string::npos) << message;
  }
}

}  // namespace
}  // namespace bulkgnn::comm
