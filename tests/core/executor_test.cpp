#include "bulkgnn/core/executor.hpp"
#include "bulkgnn/core/executor_stage.hpp"

#include "bulkgnn/core/error.hpp"

#include "fake_device_memory.hpp"

#include <gtest/gtest.h>
#include <tbb/task_arena.h>

#include <string>

namespace bulkgnn {
namespace {

TEST(Executor, ABackendAloneIsTheDefaultExecutor) {
  const executor exec = backend::reference;
  EXPECT_EQ(exec.kind(), backend::reference);
  EXPECT_EQ(exec.threads(), 0);
  EXPECT_EQ(exec.memory().space(), memory_space::host);
  EXPECT_EQ(executor().kind(), backend::cpu);
  EXPECT_EQ(backend_name(backend::cuda), "cuda");
}

TEST(Executor, BackEndNamesRoundTripAndOthersAreRefusedNamingTheOption) {
  for (const backend kind : {backend::reference, backend::cpu, backend::cuda})
    EXPECT_EQ(parse_backend(backend_name(kind), "--device"), kind);
  try {
    (void)parse_backend("gpu", "--device");
    FAIL() << "gpu was accepted";
  } catch (const option_error& e) {
    EXPECT_STREQ(e.what(), "--device must be cpu, reference or cuda; got 'gpu'");
  }
}

TEST(Executor, RunsOnItsOwnNumberOfThreads) {
  const executor one(backend::cpu, 1);
  EXPECT_EQ(one.run([] { return tbb::this_task_arena::max_concurrency(); }), 1);
  const executor three(backend::cpu, 3);
  EXPECT_EQ(three.run([] { return tbb::this_task_arena::max_concurrency(); }), 3);
  const executor all(backend::cpu);
  EXPECT_EQ(all.run([] { return tbb::this_task_arena::max_concurrency(); }),
            tbb::this_task_arena::max_concurrency());
}

TEST(Executor, CopiesShareTheThreads) {
  const executor one(backend::cpu, 1);
  const executor copy = one;  // NOLINT(performance-unnecessary-copy-initialization)
  EXPECT_EQ(copy.run([] { return tbb::this_task_arena::max_concurrency(); }), 1);
}

TEST(Executor, ExceptionsReachTheCaller) {
  const executor one(backend::cpu, 1);
  EXPECT_THROW(one.run([]() -> int { throw error("inside"); }), error);
}

TEST(Executor, ReachesTheMemoryItsBackEndCan) {
  for (const backend kind : {backend::reference, backend::cpu}) {
    const executor exec = kind;
    EXPECT_TRUE(exec.can_access(memory_space::host));
    EXPECT_TRUE(exec.can_access(memory_space::pinned_host));
    EXPECT_FALSE(exec.can_access(memory_space::device));
  }
  const executor gpu(std::make_shared<testing::fake_device_context>());
  EXPECT_EQ(gpu.kind(), backend::cuda);
  EXPECT_EQ(gpu.memory().space(), memory_space::device);
  EXPECT_FALSE(gpu.can_access(memory_space::host));
  EXPECT_TRUE(gpu.can_access(memory_space::pinned_host));
  EXPECT_TRUE(gpu.can_access(memory_space::device));
}

TEST(Executor, ACudaExecutorNeedsADeviceContext) {
  EXPECT_THROW(executor{backend::cuda}, option_error);
  EXPECT_THROW(executor{std::shared_ptr<device_context>()}, option_error);
}

TEST(Executor, RefusesNegativeThreads) {
  try {
    const executor exec(backend::cpu, -1);
    FAIL();
  } catch (const option_error& e) {
    EXPECT_NE(std::string(e.what()).find("threads"), std::string::npos) << e.what();
  }
}

TEST(ExecutorStage, HostBackEndsTimeOnTheHostClockAlone) {
  stage_times host;
  device_stage_log device;
  { const executor_stage stage(executor(backend::cpu), host, device, "sample_rows"); }
  EXPECT_EQ(host.all().size(), 1u);
  EXPECT_TRUE(host.all().contains("sample_rows"));
  // Nothing was recorded for a device to time: collecting adds no stage.
  const executor gpu(std::make_shared<testing::fake_device_context>());
  stage_times on_device;
  device.collect(gpu, on_device);
  EXPECT_TRUE(on_device.all().empty());
}

// A device executor's stages are also timed between marks of its stream and
// added when collected, once each.
TEST(ExecutorStage, DeviceStagesAreCollectedOnceBetweenStreamMarks) {
  const executor gpu(std::make_shared<testing::fake_device_context>());
  stage_times host;
  stage_times on_device;
  device_stage_log device;
  for (int i = 0; i < 3; ++i) {
    const executor_stage stage(gpu, host, device, i == 2 ? "relabel" : "sample_rows");
  }
  device.collect(gpu, on_device);
  EXPECT_EQ(on_device.all().size(), 2u);
  EXPECT_GE(on_device.get("sample_rows"), 0.0);
  const double before = on_device.get("relabel");
  device.collect(gpu, on_device);
  EXPECT_EQ(on_device.get("relabel"), before);
  EXPECT_EQ(host.all().size(), 2u);
}

}  // namespace
}  // namespace bulkgnn
