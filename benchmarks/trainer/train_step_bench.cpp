// One GraphSAGE train step (forward + backward, dropout on) on synthetic
// worst-case blocks: 2 layers, 128 input features, hidden 256, 16 classes,
// 1024 seeds with 10 distinct sources each per hop. Reports GEMM GFLOP/s as a
// counter; the argument is the BLAS thread count.

#include "bulkgnn/core/parallel.hpp"
#include "bulkgnn/trainer/model.hpp"
#include "test_support.hpp"

#include <benchmark/benchmark.h>

#include <algorithm>
#include <numeric>
#include <random>

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

void sage_train_step(benchmark::State& state) {
  const int threads = static_cast<int>(state.range(0));
  const thread_limit limit(threads);
  std::mt19937_64 gen(1);
  const csr_matrix top = fanout_block(gen, 1024, 10);
  const csr_matrix below = fanout_block(gen, top.cols, 10);
  const std::vector<aggregation_block> blocks{
      make_aggregation_block(testing::cpu_exec, below, layer_kind::sage, true),
      make_aggregation_block(testing::cpu_exec, top, layer_kind::sage, true)};
  const matrix features = testing::random_matrix(gen, below.cols, 128);
  const matrix grad = testing::random_matrix(gen, 1024, 16);
  gnn_model model({.in_features = 128, .hidden = 256, .num_classes = 16}, 1);
  std::uint32_t step = 0;
  for (auto _ : state) {
    model.forward(blocks, features.view(), kernels::dropout_key{1, 0, step++});
    model.backward(grad.view());
  }
  state.counters["gemm_GFLOP/s"] = model.gemm().flops / model.gemm().seconds / 1e9;
  state.counters["gemm_seconds_per_step"] =
      benchmark::Counter(model.gemm().seconds, benchmark::Counter::kAvgIterations);
}

BENCHMARK(sage_train_step)->Arg(1)->Arg(2)->Unit(benchmark::kMillisecond)->UseRealTime();

}  // namespace
}  // namespace bulkgnn::trainer
