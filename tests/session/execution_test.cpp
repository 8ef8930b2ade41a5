#include "bulkgnn/session/execution.hpp"

#include "bulkgnn/core/error.hpp"
#include "bulkgnn/kernels/devices.hpp"

#include <gtest/gtest.h>

#include <string>

// Where each role of a run executes: the CLI's commands ask executors_for,
// whose refusals name execution_options fields, never a front end's flags.
namespace bulkgnn::session {
namespace {

std::string refusal(const execution_options& options) {
  try {
    std::ignore = executors_for(options);
    return {};
  } catch (const option_error& e) {
    return e.what();
  }
}

TEST(Execution, OnTheHostBothRolesRunOnTheBackEndWithItsThreads) {
  for (const auto* device : {"cpu", "reference"}) {
    const auto roles = executors_for({.device = device, .threads = 3});
    EXPECT_EQ(backend_name(roles.sample.kind()), device);
    EXPECT_EQ(backend_name(roles.model.kind()), device);
    EXPECT_EQ(roles.sample.threads(), 3);
    EXPECT_EQ(roles.model.threads(), 3);
  }
}

TEST(Execution, RefusalsNameTheFieldNotAFlag) {
  for (const auto& [options, expected] :
       {std::pair{execution_options{.device = "gpu"}, "execution_options.device"},
        std::pair{execution_options{.device = "cuda", .sample_on = "gpu"},
                  "execution_options.sample_on must be cpu or cuda; got 'gpu'"},
        std::pair{execution_options{.device = "cpu", .sample_on = "cuda"},
                  "execution_options.sample_on cuda: sampling follows execution_options.device "
                  "cpu"}}) {
    const auto message = refusal(options);
    EXPECT_NE(message.find(expected), std::string::npos) << message;
    EXPECT_EQ(message.find("--"), std::string::npos) << message;
  }
}

TEST(Execution, CudaWithoutAVisibleGpuIsRefusedByName) {
  if (!kernels::visible_cuda_devices().empty()) GTEST_SKIP() << "a GPU is visible";
  for (const auto* sample_on : {"cpu", "cuda"}) {
    const auto message = refusal({.device = "cuda", .sample_on = sample_on});
    EXPECT_NE(message.find("execution_options.device cuda: no GPU is visible"), std::string::npos)
        << message;
  }
}

TEST(Execution, ARunOfOneRoleGetsOneExecutorRefusedAlike) {
  EXPECT_EQ(single_executor("reference", 2).kind(), backend::reference);
  EXPECT_EQ(single_executor("cpu", 2).threads(), 2);
  try {
    std::ignore = single_executor("tpu");
    FAIL() << "tpu is no back end";
  } catch (const option_error& e) {
    EXPECT_NE(std::string(e.what()).find("execution_options.device"), std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace bulkgnn::session
