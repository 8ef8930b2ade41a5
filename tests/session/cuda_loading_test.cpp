// The session's loading on a GPU (label gpu), as the Python
// NeighborLoader(device="cuda") runs it: the cpu loading's minibatches and
// features, made and kept in the GPU's memory. Without a visible GPU every
// test says why it is skipped; with BULKGNN_EXPECT_GPU set (the GPU
// machine's check script sets it) a missing GPU fails instead.
#include <gtest/gtest.h>

#include "bulkgnn/kernels/devices.hpp"
#include "bulkgnn/sampler/minibatch.hpp"
#include "bulkgnn/session/loading.hpp"
#include "small_csbm.hpp"

#include <cstdlib>
#include <memory>
#include <numeric>
#include <string>
#include <vector>

namespace bulkgnn::session {
namespace {

using bulkgnn::testing::scratch_dir;
using bulkgnn::testing::small_csbm;

class CudaLoading : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!kernels::visible_cuda_devices().empty()) return;
    if (std::getenv("BULKGNN_EXPECT_GPU") != nullptr)
      FAIL() << "BULKGNN_EXPECT_GPU is set but no CUDA device is visible";
    GTEST_SKIP() << (kernels::cuda_compiled() ? "no CUDA device is visible"
                                              : "this build has no CUDA back end");
  }
};

loading_plan plan_on(const std::string& device, const std::string& sampler,
                     std::vector<std::int64_t> fanouts) {
  return {.sampling = {.kind = sampler, .fanouts = std::move(fanouts), .seed = 5},
          .loading = {.batch_size = 48, .bulk = 3},
          .execution = {.device = device},
          .shuffle = true};
}

// Each minibatch of epoch 1: its digest and its features, on the host; each
// made in the loading's memory.
std::vector<std::pair<std::uint64_t, std::vector<float>>> epoch_of(minibatch_loading& loading) {
  std::vector<std::pair<std::uint64_t, std::vector<float>>> out;
  const auto made_in =
      loading.exec().kind() == backend::cuda ? memory_space::device : memory_space::host;
  auto stream = loading.epoch(1);
  while (auto mb = stream.next()) {
    EXPECT_EQ(mb->batch.input_nodes.space(), made_in);
    const auto f = mb->input_features();
    std::vector<float> features(f.data.size());
    loading.exec().memory().copy(features.data(), f.data.data(), f.data.size_bytes());
    out.emplace_back(sampler::digest(sampler::copy_to_host(mb->batch)), std::move(features));
  }
  return out;
}

TEST_F(CudaLoading, TheGpuMakesTheCpusMinibatchesInItsMemory) {
  const scratch_dir dir;
  const auto ds = std::make_shared<const data::dataset>(small_csbm(dir, 400));
  std::vector<vertex_t> seeds(300);
  std::iota(seeds.begin(), seeds.end(), vertex_t{0});
  for (const auto& [sampler, fanouts] :
       {std::pair<std::string, std::vector<std::int64_t>>{"sage", {5, 3}},
        {"labor", {5, 3}},
        {"ladies", {64, 64}}}) {
    SCOPED_TRACE(sampler);
    minibatch_loading on_cpu(ds, seeds, plan_on("cpu", sampler, fanouts));
    minibatch_loading on_gpu(ds, seeds, plan_on("cuda", sampler, fanouts));
    EXPECT_EQ(on_gpu.exec().kind(), backend::cuda);
    const auto expected = epoch_of(on_cpu);
    EXPECT_GT(expected.size(), 1u);
    EXPECT_EQ(epoch_of(on_gpu), expected);
  }
}

}  // namespace
}  // namespace bulkgnn::session
