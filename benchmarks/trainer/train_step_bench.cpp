// Not run by ctest (disabled): prints the time of one training step of the
// reference configuration, for benchmarks and reports. Run with
//   trainer_test --gtest_also_run_disabled_tests --gtest_filter='TrainStepTiming.*'

#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>
#include <random>

#include "bulkgnn/trainer/blas.hpp"
#include "bulkgnn/trainer/model.hpp"
#include "test_support.hpp"

namespace bulkgnn::trainer {
namespace {

// rows destinations, each with `fanout` distinct sources outside the
// destinations, all sources distinct: the largest block node-wise sampling
// can give.
csr_matrix fanout_block(std::mt19937_64& gen, std::int64_t rows, int fanout) {
  csr_matrix m;
  m.rows = rows;
  m.cols = rows * (1 + fanout);
  std::vector<vertex_t> sources(static_cast<std::size_t>(rows * fanout));
  std::iota(sources.begin(), sources.end(), static_cast<vertex_t>(rows));
  std::shuffle(sources.begin(), sources.end(), gen);
  for (std::int64_t r = 0; r < rows; ++r) {
    std::vector<vertex_t> row(sources.begin() + r * fanout, sources.begin() + (r + 1) * fanout);
    std::sort(row.begin(), row.end());
    m.indices.insert(m.indices.end(), row.begin(), row.end());
    m.indptr.push_back(static_cast<edge_t>(m.indices.size()));
  }
  return m;
}

TEST(TrainStepTiming, DISABLED_Sage2LayersHidden256) {
  std::mt19937_64 gen(1);
  const csr_matrix top = fanout_block(gen, 1024, 10);
  const csr_matrix below = fanout_block(gen, top.cols, 10);
  const std::vector<aggregation_block> blocks{
      make_aggregation_block(testing::cpu_exec, below, layer_kind::sage, true),
      make_aggregation_block(testing::cpu_exec, top, layer_kind::sage, true)};
  const matrix features = testing::random_matrix(gen, below.cols, 128);
  const matrix grad = testing::random_matrix(gen, 1024, 16);
  gnn_model model({.in_features = 128, .hidden = 256, .num_classes = 16}, 1);
  const int blas_before = blas_threads();
  for (const int threads : {1, 2}) {
    set_blas_threads(threads);
    double best = 1e30;
    double total = 0;
    constexpr int repeats = 20;
    for (int i = 0; i < repeats + 2; ++i) {
      if (i == 2) model.reset_gemm_stats();
      const auto start = std::chrono::steady_clock::now();
      model.forward(blocks, features.view(), dropout_key{1, 0, static_cast<std::uint32_t>(i)});
      model.backward(grad.view());
      const double s =
          std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      if (i < 2) continue;
      best = std::min(best, s);
      total += s;
    }
    std::printf(
        "BLAS threads %d: forward+backward best %.2f ms, mean %.2f ms; gemm %.2f ms/step "
        "(%.1f GFLOP/s); inputs %lld x 128\n",
        threads, best * 1e3, total / repeats * 1e3, model.gemm().seconds / repeats * 1e3,
        model.gemm().flops / model.gemm().seconds / 1e9, static_cast<long long>(below.cols));
  }
  set_blas_threads(blas_before);
}

}  // namespace
}  // namespace bulkgnn::trainer
