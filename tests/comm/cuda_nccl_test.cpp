// The NCCL communicator on the GPU (label gpu): one rank sums in place to
// what it was given and sends its rows to itself. Skipped, saying why, without a GPU or without
// NCCL in the build.
#include "../kernels/cuda_fixture.hpp"
#include "bulkgnn/comm/device_communicator.hpp"
#include "bulkgnn/comm/self_communicator.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <cstdlib>
#include <vector>

namespace bulkgnn::comm {
namespace {

class CudaNccl : public kernels::testing::CudaKernels {
 protected:
  void SetUp() override {
    CudaKernels::SetUp();
    if (IsSkipped() || HasFatalFailure()) return;
    if (nccl_compiled()) return;
    // The GPU machine's check builds with the image's NCCL: a build without
    // it there is a broken check, not a reason to skip.
    if (std::getenv("BULKGNN_EXPECT_GPU") != nullptr)
      FAIL() << "BULKGNN_EXPECT_GPU is set but this build has no NCCL";
    GTEST_SKIP() << "this build has no NCCL";
  }
};

TEST_F(CudaNccl, OneRankOwnsItsGpuAndSumsToItsOwnValues) {
  traffic_log log;
  self_communicator self("gradients", log);
  EXPECT_TRUE(every_rank_owns_a_gpu(self, gpu()));
  const auto nccl = make_nccl_communicator(self, gpu());
  EXPECT_STREQ(nccl->name(), "NCCL");
  const std::vector<float> values{1.5f, -2.0f, 0.25f, 3e-8f};
  auto there = copy_to(std::span<const float>(values), device());
  // Setting up (the GPU check, NCCL's id) uses the host communicator too.
  const auto setup_calls = log.all().at("gradients").calls;
  nccl->all_reduce_sum(std::span<float>(there.data(), there.size()));
  gpu().device()->synchronize();
  EXPECT_EQ(copy_to_host(there).to_vector(), values);
  EXPECT_EQ(log.all().at("gradients").calls, setup_calls + 1);
  EXPECT_EQ(log.all().at("gradients").bytes_sent, 0);
}

TEST_F(CudaNccl, OneRankSendsItsRowsToItself) {
  traffic_log log;
  self_communicator self("features", log);
  const auto nccl = make_nccl_communicator(self, gpu());
  std::vector<float> rows(96);
  for (std::size_t i = 0; i < rows.size(); ++i) rows[i] = 0.5F * static_cast<float>(i) - 3;
  const auto send = copy_to(std::span<const float>(rows), device());
  buffer<float> receive(rows.size(), device());
  const std::vector<std::int64_t> counts{static_cast<std::int64_t>(rows.size())};
  nccl->all_to_all(std::span<const float>(send.data(), send.size()), counts,
                   std::span<float>(receive.data(), receive.size()), counts);
  gpu().device()->synchronize();
  EXPECT_EQ(copy_to_host(receive).to_vector(), rows);
  EXPECT_EQ(log.all().at("features").bytes_sent, 0) << "a rank's part for itself is not traffic";
  const std::vector<std::int64_t> wrong{1};
  EXPECT_THROW(nccl->all_to_all(std::span<const float>(send.data(), send.size()), wrong,
                                std::span<float>(receive.data(), receive.size()), counts),
               error);
}

}  // namespace
}  // namespace bulkgnn::comm
