// One rank moves its feature rows GPU to GPU (label gpu): over a one-rank
// NCCL communicator, into device memory, the rows are those fetch() returns,
// normalised. Skipped, saying why, without a GPU or without NCCL.
#include "../kernels/cuda_fixture.hpp"
#include "bulkgnn/comm/self_communicator.hpp"
#include "bulkgnn/distributed/partitioned_features.hpp"
#include "bulkgnn/loader/feature_normalization.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

namespace bulkgnn::distributed {
namespace {

class CudaPartitionedFeatures : public kernels::testing::CudaKernels {
 protected:
  void SetUp() override {
    CudaKernels::SetUp();
    if (IsSkipped() || HasFatalFailure()) return;
    if (!comm::nccl_compiled()) GTEST_SKIP() << "this build has no NCCL";
  }
};

TEST_F(CudaPartitionedFeatures, OneRanksRowsOverNcclAreTheFetchedRowsNormalised) {
  constexpr std::int64_t vertices = 1000;
  constexpr std::int64_t columns = 37;
  std::vector<float> table(vertices * columns);
  for (std::size_t i = 0; i < table.size(); ++i)
    table[i] = static_cast<float>((i * 7919) % 1013) * 0.125F - 3;
  const dense_view<const float> features{vertices, columns, table};
  const loader::row_normalizer normalizer(features);
  comm::traffic_log log;
  comm::self_communicator self("features", log);
  const auto partition = block_partition(vertices, 1);
  partitioned_features fetcher(self, features, partition, 1);
  ASSERT_TRUE(fetcher.place_on_device(gpu(), &normalizer));
  ASSERT_EQ(fetcher.placed_memory(), &device());
  for (const std::int64_t count : {0, 1, 513, 4096}) {
    SCOPED_TRACE(std::to_string(count) + " rows");
    std::vector<vertex_t> ids(static_cast<std::size_t>(count));
    for (std::size_t i = 0; i < ids.size(); ++i)
      ids[i] = static_cast<vertex_t>((i * i * 31 + 5) % vertices);
    std::vector<float> expected(ids.size() * columns);
    fetcher.fetch(ids, {count, columns, std::span<float>(expected)});
    normalizer.apply(ids, {count, columns, std::span<float>(expected)});
    buffer<float> placed(expected.size(), device());
    fetcher.fetch_placed(ids, {count, columns, std::span<float>(placed), memory_space::device});
    EXPECT_EQ(copy_to_host(placed).to_vector(), expected);
  }
  std::vector<vertex_t> outside{static_cast<vertex_t>(vertices)};
  buffer<float> one(columns, device());
  EXPECT_THROW(
      fetcher.fetch_placed(outside, {1, columns, std::span<float>(one), memory_space::device}),
      error);
}

}  // namespace
}  // namespace bulkgnn::distributed
