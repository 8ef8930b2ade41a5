#include "bulkgnn/session/execution.hpp"

#include "bulkgnn/core/error.hpp"
#include "bulkgnn/kernels/devices.hpp"
#include "bulkgnn/session/session.hpp"

#include <fmt/format.h>

#include <cstdlib>
#include <string_view>
#include <utility>

namespace bulkgnn::session {
namespace {

constexpr std::string_view device_field = "execution_options.device";

// This rank's executor for `kind`: for cuda, a context and stream of its own
// on the rank's GPU.
executor rank_executor(backend kind, int threads) {
  if (kind != backend::cuda) return kernels::make_executor(kind, threads);
  const int gpu = rank_gpu();
  BULKGNN_EXPECTS(gpu >= 0, "{} cuda: no GPU is visible{}", device_field,
                  kernels::cuda_compiled() ? "" : " (this build has no CUDA back end)");
  return kernels::make_cuda_executor(gpu);
}

}  // namespace

int rank_gpu() {
  const auto devices = kernels::visible_cuda_devices();
  if (devices.empty()) return -1;
  int local_rank = world_rank();
  if (const char* text = std::getenv("OMPI_COMM_WORLD_LOCAL_RANK")) local_rank = std::atoi(text);
  return devices[static_cast<std::size_t>(local_rank) % devices.size()].id;
}

role_executors executors_for(const execution_options& options) {
  const backend model_backend = parse_backend(options.device, device_field);
  BULKGNN_EXPECTS(options.sample_on == "cpu" || options.sample_on == "cuda",
                  "execution_options.sample_on must be cpu or cuda; got '{}'", options.sample_on);
  BULKGNN_EXPECTS(options.sample_on == "cpu" || model_backend == backend::cuda,
                  "execution_options.sample_on {}: sampling follows execution_options.device {} "
                  "(give execution_options.device cuda to train on the GPU)",
                  options.sample_on, options.device);
  executor model_exec = rank_executor(model_backend, options.threads);
  if (model_backend != backend::cuda) return {model_exec, model_exec};
  executor sample_exec = options.sample_on == "cuda"
                             ? rank_executor(backend::cuda, options.threads)
                             : kernels::make_executor(backend::cpu, options.threads);
  return {std::move(sample_exec), std::move(model_exec)};
}

executor single_executor(const std::string& device, int threads) {
  return rank_executor(parse_backend(device, device_field), threads);
}

}  // namespace bulkgnn::session
