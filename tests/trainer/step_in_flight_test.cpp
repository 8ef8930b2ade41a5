// A train or evaluation step waits for the model's stream before the
// minibatch it read is dropped, when the minibatch's buffers come from another
// stream's pool: at the end of the step, and when the step throws (a white-box
// test of trainer/src/run_support.hpp, on a fake device).
#include "../../trainer/src/run_support.hpp"

#include "bulkgnn/core/error.hpp"
#include "fake_device_memory.hpp"

#include <gtest/gtest.h>

#include <memory>

namespace bulkgnn::trainer::detail {
namespace {

struct fake_gpu {
  std::shared_ptr<bulkgnn::testing::fake_device_context> context =
      std::make_shared<bulkgnn::testing::fake_device_context>();
  executor exec{context};
  bulkgnn::testing::fake_device_memory other_stream_pool;

  // A minibatch whose vertices the host-to-device stage placed: in device
  // memory, from a pool other than the model's.
  [[nodiscard]] loader::ready_minibatch placed_by_another_stream() {
    loader::ready_minibatch mb;
    mb.batch.input_nodes = buffer<vertex_t>(4, other_stream_pool);
    return mb;
  }
};

TEST(StepInFlight, WaitsForTheModelStreamWhenTheStepThrows) {
  fake_gpu gpu;
  const auto mb = gpu.placed_by_another_stream();
  try {
    const step_in_flight step(gpu.exec, mb);
    throw error("epoch 1, minibatch 0: the loss is nan");
  } catch (const error&) {
  }
  EXPECT_EQ(gpu.context->synchronizations, 1);
}

TEST(StepInFlight, WaitsOnceForAStepThatFinishes) {
  fake_gpu gpu;
  const auto mb = gpu.placed_by_another_stream();
  {
    step_in_flight step(gpu.exec, mb);
    step.finish();
    EXPECT_EQ(gpu.context->synchronizations, 1);
  }
  EXPECT_EQ(gpu.context->synchronizations, 1);
}

TEST(StepInFlight, BuffersOfTheModelsOwnPoolNeedNoWait) {
  fake_gpu gpu;
  loader::ready_minibatch mb;
  mb.batch.input_nodes = buffer<vertex_t>(4, gpu.exec.memory());
  {
    step_in_flight step(gpu.exec, mb);
    step.finish();
  }
  EXPECT_EQ(gpu.context->synchronizations, 0);
}

}  // namespace
}  // namespace bulkgnn::trainer::detail
