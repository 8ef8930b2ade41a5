#include "bulkgnn/session/layout.hpp"

#include "bulkgnn/comm/self_communicator.hpp"
#include "bulkgnn/core/error.hpp"
#include "small_csbm.hpp"

#include <gtest/gtest.h>

// Where a training run keeps its data and how it evaluates, decided once by
// layout_for. The GPU layouts run in tests/trainer/cuda_training_test.cpp.
namespace bulkgnn::session {
namespace {

using bulkgnn::testing::scratch_dir;
using bulkgnn::testing::small_csbm;
using trainer::evaluation_route;

TEST(Layout, AHostRunReadsTheDatasetInPlaceAndEvaluatesTheWholeGraph) {
  const scratch_dir dir;
  const auto ds = small_csbm(dir, 300);
  trainer::train_options o;
  o.eval_piece_rows = 100;  // for GPU models only
  for (const auto eval : {trainer::evaluation::full, trainer::evaluation::sampled}) {
    o.eval = eval;
    const auto layout = layout_for(trainer::whole_dataset(ds), o);
    EXPECT_FALSE(layout.sample_on_gpu);
    EXPECT_EQ(layout.graph, memory_space::host);
    EXPECT_EQ(layout.features, memory_space::host);
    EXPECT_FALSE(layout.host_to_device);
    EXPECT_FALSE(layout.features_between_gpus);
    EXPECT_FALSE(layout.evaluation_reads_sampler_copies);
    EXPECT_EQ(layout.evaluation.route, evaluation_route::whole);
    EXPECT_EQ(layout.evaluation.piece_rows, 0);
  }
}

// One rank alone evaluates the whole graph; shares are for several ranks
// (tests/tools/mpi_cli_test.cpp runs them).
TEST(Layout, ARankAloneEvaluatesTheWholeGraph) {
  const scratch_dir dir;
  const auto ds = small_csbm(dir, 300);
  comm::traffic_log log;
  comm::self_communicator ranks("gradients", log);
  trainer::data_parallel parallel;
  parallel.ranks = &ranks;
  trainer::train_options o;
  o.parallel = &parallel;
  EXPECT_EQ(layout_for(trainer::whole_dataset(ds), o).evaluation.route, evaluation_route::whole);
}

TEST(Layout, OnlyACudaExecutorHasAGpuToPlaceOn) {
  EXPECT_THROW(std::ignore = gpu_space_for(executor(backend::cpu), 1.0, graph_share_of_gpu),
               option_error);
}

}  // namespace
}  // namespace bulkgnn::session
