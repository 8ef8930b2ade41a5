// The session's loading for consumers outside the trainer (the Python
// NeighborLoader): its plan, its refusals by field, and unshuffled epochs.
#include <gtest/gtest.h>

#include "bulkgnn/core/error.hpp"
#include "bulkgnn/kernels/devices.hpp"
#include "bulkgnn/session/loading.hpp"
#include "small_csbm.hpp"

#include <algorithm>
#include <memory>
#include <numeric>
#include <string>
#include <vector>

namespace bulkgnn::session {
namespace {

using bulkgnn::testing::scratch_dir;
using bulkgnn::testing::small_csbm;

loading_plan plan_of(bool shuffle) {
  return {.sampling = {.kind = "sage", .fanouts = {4, 3}, .seed = 7},
          .loading = {.batch_size = 32, .bulk = 3},
          .execution = {.device = "cpu", .threads = 2},
          .shuffle = shuffle};
}

std::vector<std::vector<vertex_t>> epoch_seeds(minibatch_loading& loading, std::uint32_t epoch) {
  std::vector<std::vector<vertex_t>> seeds;
  auto stream = loading.epoch(epoch);
  while (auto mb = stream.next())
    seeds.emplace_back(mb->batch.seeds.begin(), mb->batch.seeds.end());
  return seeds;
}

std::string refusal(std::shared_ptr<const data::dataset> ds, const loading_plan& plan) {
  try {
    const minibatch_loading loading(std::move(ds), {0, 1, 2}, plan);
  } catch (const option_error& e) {
    return e.what();
  }
  return "";
}

TEST(Loading, AnUnshuffledEpochTakesTheSeedsInTheCallersOrder) {
  const scratch_dir dir;
  const auto ds = std::make_shared<const data::dataset>(small_csbm(dir, 300));
  std::vector<vertex_t> seeds(100);
  std::iota(seeds.begin(), seeds.end(), vertex_t{0});
  std::reverse(seeds.begin(), seeds.end());
  minibatch_loading loading(ds, seeds, plan_of(false));
  EXPECT_EQ(loading.minibatches_per_epoch(), 4);
  for (const std::uint32_t epoch : {0u, 5u}) {
    std::vector<vertex_t> seen;
    for (const auto& batch : epoch_seeds(loading, epoch))
      seen.insert(seen.end(), batch.begin(), batch.end());
    EXPECT_EQ(seen, seeds) << "epoch " << epoch;
  }
}

TEST(Loading, AShuffledEpochIsAPermutationThatDependsOnTheEpoch) {
  const scratch_dir dir;
  const auto ds = std::make_shared<const data::dataset>(small_csbm(dir, 300));
  std::vector<vertex_t> seeds(100);
  std::iota(seeds.begin(), seeds.end(), vertex_t{0});
  minibatch_loading loading(ds, seeds, plan_of(true));
  const auto first = epoch_seeds(loading, 0);
  EXPECT_EQ(first, epoch_seeds(loading, 0));
  EXPECT_NE(first, epoch_seeds(loading, 1));
  std::vector<vertex_t> seen;
  for (const auto& batch : first) seen.insert(seen.end(), batch.begin(), batch.end());
  std::sort(seen.begin(), seen.end());
  EXPECT_EQ(seen, seeds);
}

TEST(Loading, RefusalsNameTheFieldNotAFlag) {
  const scratch_dir dir;
  const auto ds = std::make_shared<const data::dataset>(small_csbm(dir, 300));
  if (kernels::visible_cuda_devices().empty()) {
    auto cuda = plan_of(true);
    cuda.execution.device = "cuda";
    EXPECT_NE(refusal(ds, cuda).find("execution_options.device cuda: no GPU is visible"),
              std::string::npos)
        << refusal(ds, cuda);
  }
  auto unknown = plan_of(true);
  unknown.execution.device = "gpu";
  EXPECT_NE(refusal(ds, unknown).find("execution_options.device"), std::string::npos)
      << refusal(ds, unknown);
  auto no_hops = plan_of(true);
  no_hops.sampling.fanouts.clear();
  EXPECT_NE(refusal(ds, no_hops).find("sampler_options.fanouts"), std::string::npos)
      << refusal(ds, no_hops);
}

}  // namespace
}  // namespace bulkgnn::session
