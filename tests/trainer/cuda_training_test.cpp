// Training with a cuda model executor against the cpu back end (label gpu:
// skipped, saying why, without a GPU). The train step's kernels give the
// cpu's bits, so whole runs must too: the same weights, losses and
// accuracies, not merely close ones.
#include "../kernels/cuda_fixture.hpp"
#include "bulkgnn/kernels/gather_rows.hpp"
#include "bulkgnn/kernels/spmm.hpp"
#include "bulkgnn/session/layout.hpp"
#include "bulkgnn/session/training.hpp"
#include "bulkgnn/trainer/training_run.hpp"
#include "scratch_dir.hpp"
#include "small_csbm.hpp"
#include "small_run.hpp"
#include "train_steps.hpp"

#include <gtest/gtest.h>

#include <random>
#include <string>
#include <tuple>

namespace bulkgnn::trainer {
namespace {

using bulkgnn::testing::scratch_dir;
using bulkgnn::testing::small_csbm;
// train(ds, o): over the loaders the session assembles, as `bulkgnn train` runs.
using session::train;
using testing::expect_same_steps;
using testing::same_bits;
using testing::small_options;
using testing::train_two_steps;

class CudaTraining : public kernels::testing::CudaKernels {};

void expect_same_runs(const train_result& cpu, const train_result& gpu, const std::string& what) {
  ASSERT_EQ(cpu.epochs.size(), gpu.epochs.size()) << what;
  for (std::size_t e = 0; e < cpu.epochs.size(); ++e) {
    EXPECT_EQ(cpu.epochs[e].loss, gpu.epochs[e].loss) << what << ", epoch " << e;
    EXPECT_EQ(cpu.epochs[e].train_acc, gpu.epochs[e].train_acc) << what << ", epoch " << e;
    EXPECT_EQ(cpu.epochs[e].valid_acc, gpu.epochs[e].valid_acc) << what << ", epoch " << e;
    EXPECT_EQ(cpu.epochs[e].test_acc, gpu.epochs[e].test_acc) << what << ", epoch " << e;
  }
  EXPECT_TRUE(same_bits(cpu.parameters, gpu.parameters)) << what;
}

// `cuda` is a host copy of the GPU's result.
void expect_same_csr(const csr_matrix& cpu, const csr_matrix& cuda, const std::string& what) {
  EXPECT_EQ(cpu.rows, cuda.rows) << what;
  EXPECT_EQ(cpu.cols, cuda.cols) << what;
  EXPECT_EQ(cpu.indptr, cuda.indptr) << what;
  EXPECT_EQ(cpu.indices, cuda.indices) << what;
  EXPECT_EQ(cpu.values, cuda.values) << what;
}

TEST_F(CudaTraining, TwoTrainStepsEqualTheCpuBitForBit) {
  for (const auto kind : {layer_kind::sage, layer_kind::gcn}) {
    const auto cpu = train_two_steps(testing::cpu_exec, kind, 11);
    const auto cuda = train_two_steps(gpu(), kind, 11);
    expect_same_steps(cpu, cuda, layer_kind_name(kind));
  }
}

TEST_F(CudaTraining, TransposeEqualsTheCpu) {
  std::mt19937_64 gen(4);
  for (const bool weighted : {false, true}) {
    const auto a = testing::random_block(gen, 700, 2000, 9, weighted);
    const auto cpu = kernels::transpose(testing::cpu_exec, a.view());
    const auto on_device = copy_to(a.view(), device());
    const auto cuda = copy_to_host(kernels::transpose(gpu(), on_device.view()));
    expect_same_csr(cpu, cuda, weighted ? "weighted" : "pattern");
  }
}

// Host minibatches feeding the GPU model: the loader is the cpu's, so the
// minibatches are the same; sampled and full-graph evaluation alike.
TEST_F(CudaTraining, WholeRunsEqualTheCpuRun) {
  const scratch_dir dir;
  const auto ds = small_csbm(dir);
  for (const std::string kind : {"sage", "ladies"})
    for (const auto eval : {evaluation::full, evaluation::sampled}) {
      auto o = small_options(kind);
      o.eval = eval;
      const auto cpu = train(ds, o);
      o.model_exec = gpu();
      const auto cuda = train(ds, o);
      expect_same_runs(cpu, cuda,
                       kind + (eval == evaluation::full ? ", full eval" : ", sampled eval"));
    }
}

// Full-graph evaluation layer by layer in pieces (as for a graph larger than
// the GPU): the same accuracies as the CPU's evaluation of the whole graph.
TEST_F(CudaTraining, EvaluationInPiecesEqualsTheCpuRun) {
  const scratch_dir dir;
  const auto ds = small_csbm(dir);
  for (const std::string kind : {"sage", "ladies"}) {
    auto o = small_options(kind);
    o.eval = evaluation::full;
    const auto cpu = train(ds, o);
    o.model_exec = gpu();
    for (const std::int64_t piece_rows : {1000, 333}) {
      o.eval_piece_rows = piece_rows;
      const auto plan = session::layout_for(whole_dataset(ds), o).evaluation;
      ASSERT_EQ(plan.route, evaluation_route::pieces);
      ASSERT_EQ(plan.piece_rows, piece_rows);
      expect_same_runs(cpu, train(ds, o), kind + ", pieces of " + std::to_string(piece_rows));
    }
  }
}

// Sampling and gathering on the GPU too: the minibatches stay in device
// memory from the sampler to the train step, and the run is still the CPU's.
TEST_F(CudaTraining, RunsThatSampleOnTheGpuEqualTheCpuRun) {
  const scratch_dir dir;
  const auto ds = small_csbm(dir);
  for (const std::string kind : {"sage", "ladies"}) {
    auto o = small_options(kind);
    const auto cpu = train(ds, o);
    o.exec = gpu();
    expect_same_runs(cpu, train(ds, o), kind);
    // As `bulkgnn train --sample-on cuda` runs: the model on a stream of its own.
    o.model_exec = kernels::make_cuda_executor(0);
    expect_same_runs(cpu, train(ds, o), kind + ", model on its own stream");
    o.model_exec.reset();
    o.normalize_features = loader::feature_normalization::row;
    const auto normalized = train(ds, o);
    o.exec = testing::cpu_exec;
    expect_same_runs(train(ds, o), normalized, kind + ", normalised features");
  }
}

// Rows 100..399 of a larger matrix (indptr from a non-zero offset), and a
// matrix without entries.
TEST_F(CudaTraining, TransposeAndGatherRowsOfOffsetViewsAndEmptyMatrices) {
  std::mt19937_64 gen(7);
  const auto whole = testing::random_block(gen, 500, 900, 8, true);
  auto rows = whole.view();
  rows.rows = 300;
  rows.indptr = rows.indptr.subspan(100, 301);
  // An offset view: indices and values start at the first row's offset and
  // end at the last row's.
  const auto first = static_cast<std::size_t>(rows.indptr.front());
  const auto entries = static_cast<std::size_t>(rows.indptr.back() - rows.indptr.front());
  rows.indices = rows.indices.subspan(first, entries);
  rows.values = rows.values.subspan(first, entries);
  csr_matrix empty;
  empty.rows = 4;
  empty.cols = 3;
  empty.indptr = {0, 0, 0, 0, 0};
  for (const csr_view& a : {rows, empty.view()}) {
    const auto on_device = copy_to(a, device());
    const auto cpu = kernels::transpose(testing::cpu_exec, a);
    const auto cuda = copy_to_host(kernels::transpose(gpu(), on_device.view()));
    expect_same_csr(cpu, cuda, "transpose of " + std::to_string(a.rows) + " rows");
    const std::vector<vertex_t> some{0, 2, 1};
    const auto some_there = on_gpu(some);
    const auto cpu_rows = kernels::gather_rows(testing::cpu_exec, a, some);
    const auto cuda_rows = copy_to_host(
        kernels::gather_rows(gpu(), on_device.view(), std::span<const vertex_t>(some_there)));
    expect_same_csr(cpu_rows, cuda_rows, "rows of " + std::to_string(a.rows) + " rows");
  }
}

TEST_F(CudaTraining, GatherRowsEqualsTheCpu) {
  std::mt19937_64 gen(6);
  const auto a = testing::random_block(gen, 500, 800, 12, true);
  const std::vector<vertex_t> rows{3, 499, 0, 3, 250, 17};
  const auto cpu = kernels::gather_rows(testing::cpu_exec, a.view(), rows);
  const auto on_device = copy_to(a.view(), device());
  const auto rows_there = on_gpu(rows);
  const auto cuda = copy_to_host(
      kernels::gather_rows(gpu(), on_device.view(), std::span<const vertex_t>(rows_there)));
  expect_same_csr(cpu, cuda, "gather_rows");
}

// A checkpoint holds host copies, so a run started on one back end resumes
// on the other and ends where an uninterrupted run ends.
TEST_F(CudaTraining, CheckpointsMoveBetweenGpuAndCpu) {
  const scratch_dir dir;
  const auto ds = small_csbm(dir);
  auto o = small_options("sage");
  o.epochs = 4;
  const auto straight = train(ds, o);
  for (const bool gpu_first : {true, false}) {
    const scratch_dir checkpoints;
    auto first = o;
    first.epochs = 2;
    first.checkpoint_dir = checkpoints.path();
    if (gpu_first) first.model_exec = gpu();
    std::ignore = train(ds, first);
    auto second = o;
    second.checkpoint_dir = checkpoints.path();
    second.resume = true;
    if (!gpu_first) second.model_exec = gpu();
    const auto resumed = train(ds, second);
    expect_same_runs(straight, resumed, gpu_first ? "gpu then cpu" : "cpu then gpu");
  }
}

}  // namespace
}  // namespace bulkgnn::trainer
