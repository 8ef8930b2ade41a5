// The CUDA back end against the cpu back end, bit for bit, on random inputs
// (label gpu). Without a visible GPU every test says why it is skipped; with
// BULKGNN_EXPECT_GPU set (the GPU machine's check script sets it), a missing
// GPU fails instead.
#include "bulkgnn/core/error.hpp"
#include "bulkgnn/kernels/devices.hpp"
#include "bulkgnn/kernels/relabel.hpp"
#include "bulkgnn/kernels/sample_rows.hpp"
#include "bulkgnn/kernels/spmm.hpp"
#include "test_support.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <optional>
#include <random>

namespace bulkgnn::kernels {
namespace {

using testing::cpu_exec;
using testing::expect_identical;

class CudaKernels : public ::testing::Test {
 protected:
  void SetUp() override {
    if (visible_cuda_devices().empty()) {
      if (std::getenv("BULKGNN_EXPECT_GPU") != nullptr)
        FAIL() << "BULKGNN_EXPECT_GPU is set but no CUDA device is visible";
      GTEST_SKIP() << (cuda_compiled() ? "no CUDA device is visible"
                                       : "this build has no CUDA back end");
    }
    gpu_.emplace(make_cuda_executor(0));
  }

  [[nodiscard]] const executor& gpu() const { return *gpu_; }
  [[nodiscard]] memory_resource& device() const { return gpu_->memory(); }
  [[nodiscard]] memory_resource& pinned() const { return gpu_->device()->pinned_memory(); }

 private:
  std::optional<executor> gpu_;
};

TEST_F(CudaKernels, SampleRowsDrawsWhatTheCpuDrawsInEveryMode) {
  std::mt19937_64 gen(3);
  for (int round = 0; round < 4; ++round) {
    const bool weighted = round % 2 == 0;
    const auto a = testing::random_csr(gen, {.rows = 500 + 300 * round,
                                             .cols = 700,
                                             .mean_degree = 8 + 20 * round,
                                             .weighted = weighted,
                                             .empty_rows = 0.1});
    std::uniform_int_distribution<vertex_t> row(0, static_cast<vertex_t>(a.rows - 1));
    std::vector<vertex_t> rows(2 * a.rows);
    std::vector<std::uint32_t> minibatch(rows.size());
    for (std::size_t i = 0; i < rows.size(); ++i) {
      rows[i] = row(gen);
      minibatch[i] = static_cast<std::uint32_t>(i % 5);
    }
    const row_streams host_streams{
        .seed = 9, .epoch = 1, .layer = 2, .minibatch_of_row = minibatch};
    const auto device_a = copy_to(a.view(), device());
    const auto device_rows = copy_to(std::span<const vertex_t>(rows), device());
    const auto device_minibatch = copy_to(std::span<const std::uint32_t>(minibatch), device());
    const row_streams device_streams{
        .seed = 9, .epoch = 1, .layer = 2, .minibatch_of_row = device_minibatch};
    for (const std::int64_t fanout : {1, 5, 25, -1})
      for (const replacement mode : {replacement::without, replacement::with})
        for (const weighting weights : {weighting::uniform, weighting::by_value}) {
          if (fanout == -1 && mode == replacement::with) continue;
          const row_sampling_options options{.fanout = fanout, .mode = mode, .weights = weights};
          SCOPED_TRACE(::testing::Message()
                       << "round " << round << " fanout " << fanout << " mode "
                       << static_cast<int>(mode) << " weights " << static_cast<int>(weights));
          const auto on_gpu =
              sample_rows(gpu(), device_a.view(), device_rows, device_streams, options);
          EXPECT_EQ(on_gpu.space(), memory_space::device);
          expect_identical(sample_rows(cpu_exec, a.view(), rows, host_streams, options),
                           copy_to_host(on_gpu));
        }
  }
}

TEST_F(CudaKernels, SampleRowsReadsAGraphInPinnedHostMemoryThroughUva) {
  std::mt19937_64 gen(4);
  const auto a = testing::random_csr(gen, {.rows = 400, .cols = 400, .mean_degree = 30});
  std::vector<vertex_t> rows(400);
  std::vector<std::uint32_t> minibatch(400, 7);
  for (std::size_t i = 0; i < rows.size(); ++i) rows[i] = static_cast<vertex_t>(i);
  const auto pinned_a = copy_to(a.view(), pinned());
  const auto device_rows = copy_to(std::span<const vertex_t>(rows), device());
  const auto device_minibatch = copy_to(std::span<const std::uint32_t>(minibatch), device());
  const row_sampling_options options{.fanout = 10};
  expect_identical(
      sample_rows(cpu_exec, a.view(), rows, {.seed = 1, .minibatch_of_row = minibatch}, options),
      copy_to_host(sample_rows(gpu(), pinned_a.view(), device_rows,
                               {.seed = 1, .minibatch_of_row = device_minibatch}, options)));
}

TEST_F(CudaKernels, SampleRowsRefusesPageableHostRowsAndOutOfRangeRows) {
  std::mt19937_64 gen(5);
  const auto a = testing::random_csr(gen, {.rows = 50, .cols = 50});
  const auto device_a = copy_to(a.view(), device());
  const std::vector<vertex_t> host_rows{1, 2};
  const auto minibatch =
      copy_to(std::span<const std::uint32_t>(std::vector<std::uint32_t>{0, 0}), device());
  EXPECT_THROW((void)sample_rows(gpu(), device_a.view(), host_rows, {.minibatch_of_row = minibatch},
                                 {.fanout = 2}),
               option_error);
  const auto bad_rows = copy_to(std::span<const vertex_t>(std::vector<vertex_t>{1, 50}), device());
  EXPECT_THROW((void)sample_rows(gpu(), device_a.view(), bad_rows, {.minibatch_of_row = minibatch},
                                 {.fanout = 2}),
               option_error);
}

TEST_F(CudaKernels, RelabelNumbersSourcesAsTheCpuDoes) {
  std::mt19937_64 gen(7);
  const auto a = testing::random_csr(gen, {.rows = 3000, .cols = 3000, .mean_degree = 12});
  // Segments of distinct destinations (one empty), as a bulk's frontier.
  segmented_vertices destinations;
  std::uniform_int_distribution<vertex_t> vertex(0, 2999);
  for (const int size : {50, 0, 400, 1, 900}) {
    std::vector<vertex_t> segment;
    while (static_cast<int>(segment.size()) < size) {
      const vertex_t v = vertex(gen);
      if (std::find(segment.begin(), segment.end(), v) == segment.end()) segment.push_back(v);
    }
    destinations.push_segment(segment);
  }
  const std::vector<std::uint32_t> minibatch(destinations.vertices.size(), 0);
  const auto sampled = sample_rows(cpu_exec, a.view(), destinations.vertices,
                                   {.seed = 2, .minibatch_of_row = minibatch}, {.fanout = 8});
  const auto expected = relabel_by_segment(cpu_exec, destinations, sampled.view());

  segmented_vertices there;
  there.vertices = copy_to(std::span<const vertex_t>(destinations.vertices), device());
  there.offsets = copy_to(std::span<const std::int64_t>(destinations.offsets), pinned());
  const auto sampled_there = copy_to(sampled.view(), device());
  const auto got = relabel_by_segment(gpu(), there, sampled_there.view());
  EXPECT_EQ(copy_to_host(got.sources.vertices), expected.sources.vertices);
  EXPECT_EQ(copy_to_host(got.sources.offsets), expected.sources.offsets);
  expect_identical(expected.blocks, copy_to_host(got.blocks));
}

TEST_F(CudaKernels, GatherDenseRowsCopiesTheRowsTheCpuCopies) {
  std::mt19937_64 gen(6);
  const auto x = testing::random_dense(gen, 1000, 37);
  std::uniform_int_distribution<vertex_t> row(0, 999);
  std::vector<vertex_t> rows(3000);
  for (auto& r : rows) r = row(gen);
  testing::dense_matrix expected(3000, 37);
  gather_dense_rows(cpu_exec, x.view(), rows, expected.view());
  for (memory_resource* features : {&device(), &pinned()}) {
    const auto x_there = copy_to(std::span<const float>(x.data), *features);
    const auto rows_there = copy_to(std::span<const vertex_t>(rows), device());
    buffer<float> out(3000 * 37, device());
    gather_dense_rows(gpu(), {1000, 37, std::span<const float>(x_there), features->space()},
                      rows_there, {3000, 37, std::span<float>(out), memory_space::device});
    const auto back = copy_to_host(out);
    EXPECT_TRUE(testing::same_bits(expected.data, std::span<const float>(back)))
        << memory_space_name(features->space());
  }
}

}  // namespace
}  // namespace bulkgnn::kernels
