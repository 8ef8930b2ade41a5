#pragma once

#include "bulkgnn/core/executor.hpp"

#include <string>

// Where each role of a run executes, decided once for the CLI's train,
// sample and full-batch commands and the Python loader (loading.hpp), so that
// they agree on the device and the streams.
namespace bulkgnn::session {

// As a front end asks for it. Errors name these fields; front ends map them
// to their own vocabulary (--device, --sample-on).
struct execution_options {
  std::string device = "cpu";     // the model's back end: cpu, reference or cuda
  std::string sample_on = "cpu";  // with device cuda: sampling and gathering on cpu or cuda
  int threads = 0;                // a host executor's threads (0: every core allowed)
};

// One executor per role. `sample` runs the sampler and the feature gather;
// `model` trains and evaluates. On a GPU each has a stream of its own, so
// that sampling the next minibatches overlaps the train step; on the host
// they are one executor.
struct role_executors {
  executor sample;
  executor model;
};

// A cuda role runs on this rank's GPU: its rank on the node (Open MPI's
// OMPI_COMM_WORLD_LOCAL_RANK, else the world rank) modulo the GPUs it sees,
// so that a node's ranks spread over its GPUs and share them where there are
// fewer. option_error naming execution_options.device or .sample_on for a
// name that is no back end, sample_on cuda without device cuda, or cuda
// without a visible GPU.
[[nodiscard]] role_executors executors_for(const execution_options& options);

// The id of the GPU a cuda role of this rank runs on (as above), or -1 where
// no GPU is visible.
[[nodiscard]] int rank_gpu();

// The one executor of a run with one role (bulkgnn sample, full-batch
// training) on `device`, placed as executors_for places a role; the same
// refusals, naming execution_options.device.
[[nodiscard]] executor single_executor(const std::string& device, int threads = 0);

}  // namespace bulkgnn::session
