// The NCCL reducer on the GPU (label gpu): a one-rank communicator sums in
// place to what it was given. Skipped, saying why, without a GPU or without
// NCCL in the build.
#include "../kernels/cuda_fixture.hpp"
#include "bulkgnn/comm/device_reducer.hpp"
#include "bulkgnn/comm/self_communicator.hpp"

#include <gtest/gtest.h>

#include <vector>

namespace bulkgnn::comm {
namespace {

class CudaNccl : public kernels::testing::CudaKernels {
 protected:
  void SetUp() override {
    CudaKernels::SetUp();
    if (IsSkipped() || HasFatalFailure()) return;
    if (!nccl_compiled()) GTEST_SKIP() << "this build has no NCCL";
  }
};

TEST_F(CudaNccl, OneRankOwnsItsGpuAndSumsToItsOwnValues) {
  traffic_log log;
  self_communicator self("gradients", log);
  EXPECT_TRUE(every_rank_owns_a_gpu(self, gpu()));
  const auto reducer = make_nccl_reducer(self, gpu());
  EXPECT_STREQ(reducer->name(), "NCCL");
  const std::vector<float> values{1.5f, -2.0f, 0.25f, 3e-8f};
  auto there = copy_to(std::span<const float>(values), device());
  reducer->all_reduce_sum(std::span<float>(there.data(), there.size()));
  gpu().device()->synchronize();
  EXPECT_EQ(copy_to_host(there).to_vector(), values);
}

}  // namespace
}  // namespace bulkgnn::comm
