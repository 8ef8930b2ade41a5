#include "bulkgnn/core/buffer.hpp"
#include "bulkgnn/core/csr.hpp"
#include "bulkgnn/core/error.hpp"
#include "fake_device_memory.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <numeric>
#include <span>
#include <vector>

namespace bulkgnn {
namespace {

TEST(Buffer, BehavesLikeAVectorOnTheHost) {
  buffer<std::int64_t> b;
  std::vector<std::int64_t> v;
  for (std::int64_t i = 0; i < 1000; ++i) {
    b.push_back(i * 3);
    v.push_back(i * 3);
  }
  b.resize(1200);
  v.resize(1200);
  EXPECT_EQ(b, v);
  EXPECT_EQ(b[1100], 0) << "new elements are zero, as in a vector";
  const std::vector<std::int64_t> middle{-1, -2, -3};
  b.insert(b.begin() + 5, middle.begin(), middle.end());
  v.insert(v.begin() + 5, middle.begin(), middle.end());
  b.insert(b.end(), middle.begin(), middle.end());
  v.insert(v.end(), middle.begin(), middle.end());
  EXPECT_EQ(b, v);
  b.erase(b.begin() + 2, b.begin() + 9);
  v.erase(v.begin() + 2, v.begin() + 9);
  EXPECT_EQ(b, v);
  b.assign(7, 42);
  v.assign(7, 42);
  EXPECT_EQ(b, v);
  EXPECT_EQ(b.space(), memory_space::host);
}

// An empty buffer holds no storage; inserting or erasing nothing must not
// hand its null pointer to memmove (UBSan's nonnull check).
TEST(Buffer, EmptyRangesOnAnEmptyBufferTouchNothing) {
  buffer<int> b;
  const std::vector<int> none;
  EXPECT_EQ(b.insert(b.end(), none.begin(), none.end()), b.end());
  EXPECT_EQ(b.erase(b.begin(), b.end()), b.end());
  b.assign(none.begin(), none.end());
  EXPECT_TRUE(b.empty());
}

TEST(Buffer, PushBackOfItsOwnElementSurvivesGrowth) {
  buffer<int> b{1, 2, 3};
  b.shrink_to_fit();
  for (int i = 0; i < 10; ++i) b.push_back(b[0]);
  EXPECT_EQ(b.size(), 13u);
  for (std::size_t i = 3; i < b.size(); ++i) EXPECT_EQ(b[i], 1);
}

TEST(Buffer, CopiesAreDeepAndMovesTakeTheStorage) {
  buffer<float> a{1.0f, 2.0f};
  buffer<float> copy = a;
  copy[0] = 5.0f;
  EXPECT_EQ(a[0], 1.0f);
  const float* storage = a.data();
  buffer<float> moved = std::move(a);
  EXPECT_EQ(moved.data(), storage);
  EXPECT_TRUE(a.empty());  // NOLINT(bugprone-use-after-move): moved-from is empty
}

TEST(Buffer, IsAContiguousRangeForSpans) {
  buffer<int> b(10);
  std::iota(b.begin(), b.end(), 0);
  const std::span<const int> s = b;
  EXPECT_EQ(s.size(), 10u);
  EXPECT_EQ(s.data(), b.data());
}

TEST(Buffer, AllocationsAreAlignedForSimd) {
  for (std::size_t n : {1u, 3u, 17u, 1000u}) {
    buffer<float> b(n);
    EXPECT_EQ(reinterpret_cast<std::uintptr_t>(b.data()) % memory_resource::alignment, 0u);
  }
}

TEST(Buffer, InDeviceMemoryRefusesHostElementWork) {
  testing::fake_device_memory device;
  buffer<int> b(4, device);
  EXPECT_EQ(b.space(), memory_space::device);
  EXPECT_EQ(b.size(), 4u);
  try {
    b.push_back(1);
    FAIL() << "push_back on a device buffer must throw";
  } catch (const error& e) {
    EXPECT_NE(std::string(e.what()).find("buffer::push_back"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("device memory"), std::string::npos) << e.what();
  }
  EXPECT_THROW(b.resize(10), error);
  EXPECT_THROW((void)b.to_vector(), error);
  EXPECT_NO_THROW(b.resize(2)) << "shrinking touches no element";
}

TEST(Buffer, CopiesAndGrowthGoThroughTheResource) {
  testing::fake_device_memory device;
  {
    buffer<int> b(4, device);
    const auto copies = device.copies;
    buffer<int> copy = b;
    EXPECT_EQ(copy.space(), memory_space::device);
    EXPECT_GT(device.copies, copies);
    b.reserve(100);
  }
  EXPECT_EQ(device.allocations, device.deallocations);
}

TEST(Buffer, CopiesBetweenSpacesGoThroughTheResourceThatReachesBoth) {
  testing::fake_device_memory device;
  const std::vector<int> values{4, 5, 6};
  const auto on_device = copy_to(std::span<const int>(values), device);
  EXPECT_EQ(on_device.space(), memory_space::device);
  EXPECT_EQ(device.copies, 1);
  const auto back = copy_to_host(on_device);
  EXPECT_EQ(back.space(), memory_space::host);
  EXPECT_EQ(device.copies, 2);
  EXPECT_EQ(back.to_vector(), values);

  csr_matrix m;
  m.rows = 2;
  m.cols = 3;
  m.indptr = {0, 1, 3};
  m.indices = {2, 0, 1};
  m.values = {0.5f, 1.5f, 2.5f};
  const auto device_m = copy_to(m.view(), device);
  EXPECT_EQ(device_m.space(), memory_space::device);
  const auto host_m = copy_to_host(device_m);
  EXPECT_EQ(host_m.rows, 2);
  EXPECT_EQ(host_m.cols, 3);
  EXPECT_EQ(host_m.indptr, m.indptr);
  EXPECT_EQ(host_m.indices, m.indices);
  EXPECT_EQ(host_m.values, m.values);
}

TEST(Buffer, CsrMatrixViewSaysWhereItLives) {
  testing::fake_device_memory device;
  csr_matrix m;
  EXPECT_EQ(m.view().space, memory_space::host);
  m.indptr = buffer<edge_t>(1, device);
  EXPECT_EQ(m.space(), memory_space::device);
  EXPECT_EQ(m.view().space, memory_space::device);
  EXPECT_THROW((void)find_csr_problem(m.view()), internal_error);
}

}  // namespace
}  // namespace bulkgnn
