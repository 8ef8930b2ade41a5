#include "bulkgnn/trainer/placement.hpp"

#include "bulkgnn/core/error.hpp"
#include "fake_device_memory.hpp"
#include "test_support.hpp"

#include <algorithm>
#include <memory>

#include <gtest/gtest.h>

namespace bulkgnn::trainer {
namespace {

using testing::cpu_exec;

TEST(Placement, AHostExecutorReadsHostAndPinnedMemoryInPlace) {
  EXPECT_FALSE(needs_placing(cpu_exec, memory_space::host));
  EXPECT_FALSE(needs_placing(cpu_exec, memory_space::pinned_host));
  EXPECT_FALSE(needs_placing(executor(backend::reference), memory_space::host));
  EXPECT_THROW((void)needs_placing(cpu_exec, memory_space::device), internal_error);
}

// A GPU executor's view, on the fake device (host memory tagged device).
TEST(Placement, AGpuExecutorGetsCopiesOfHostAndPinnedDataInItsOwnMemory) {
  auto context = std::make_shared<bulkgnn::testing::fake_device_context>();
  const executor gpu(context);
  EXPECT_TRUE(needs_placing(gpu, memory_space::host));
  EXPECT_TRUE(needs_placing(gpu, memory_space::pinned_host));
  EXPECT_FALSE(needs_placing(gpu, memory_space::device));
  const std::vector<std::int32_t> labels{3, 1, 2};
  const placed<std::int32_t> copy(gpu, labels, memory_space::host);
  EXPECT_NE(copy.span().data(), labels.data());
  EXPECT_EQ(copy.space(), memory_space::device);
  EXPECT_EQ(context->device_resource.copies, 1);
  EXPECT_TRUE(std::equal(labels.begin(), labels.end(), copy.span().begin()));
  const placed<std::int32_t> already_there(gpu, copy.span(), memory_space::device);
  EXPECT_EQ(already_there.span().data(), copy.span().data());
}

TEST(Placement, PlacedDataInPlaceIsTheCallersMemory) {
  const std::vector<std::int32_t> labels{3, 1, 2};
  const placed<std::int32_t> in_place(cpu_exec, labels, memory_space::host);
  EXPECT_EQ(in_place.span().data(), labels.data());
  EXPECT_EQ(in_place.space(), memory_space::host);

  const std::vector<float> values{1, 2, 3, 4, 5, 6};
  const placed_matrix m(cpu_exec, {2, 3, std::span<const float>(values)});
  EXPECT_EQ(m.view().data.data(), values.data());
  EXPECT_EQ(m.view().rows, 2);
  EXPECT_EQ(m.view().cols, 3);
}

TEST(Placement, CopyForRebasesAViewOfSomeRows) {
  csr_matrix whole;
  whole.rows = 3;
  whole.cols = 4;
  whole.indptr = {0, 2, 3, 5};
  whole.indices = {0, 3, 1, 2, 3};
  whole.values = {1, 2, 3, 4, 5};
  auto rows_1_2 = whole.view();
  rows_1_2.rows = 2;
  rows_1_2.indptr = rows_1_2.indptr.subspan(1);
  rows_1_2.indices = rows_1_2.indices.subspan(2);
  rows_1_2.values = rows_1_2.values.subspan(2);
  const auto copy = copy_for(cpu_exec, rows_1_2);
  EXPECT_EQ(copy.rows, 2);
  EXPECT_EQ(copy.cols, 4);
  EXPECT_EQ(copy.indptr, (std::vector<edge_t>{0, 1, 3}));
  EXPECT_EQ(copy.indices, (std::vector<vertex_t>{1, 2, 3}));
  EXPECT_EQ(copy.values, (std::vector<float>{3, 4, 5}));
  EXPECT_TRUE(find_csr_problem(copy.view()).empty());
}

}  // namespace
}  // namespace bulkgnn::trainer
