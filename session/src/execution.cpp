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

executor rank_executor(backend kind, std::string_view option, int threads = 0) {
  if (kind != backend::cuda) return kernels::make_executor(kind, threads);
  const auto devices = kernels::visible_cuda_devices();
  BULKGNN_EXPECTS(!devices.empty(), "{} cuda: no GPU is visible{}", option,
                  kernels::cuda_compiled() ? "" : " (this build has no CUDA back end)");
  int local_rank = world_rank();
  if (const char* text = std::getenv("OMPI_COMM_WORLD_LOCAL_RANK")) local_rank = std::atoi(text);
  return kernels::make_cuda_executor(
      devices[static_cast<std::size_t>(local_rank) % devices.size()].id);
}

}  // namespace

role_executors executors_for(const execution_options& options) {
  const backend model = parse_backend(options.device, "execution_options.device");
  BULKGNN_EXPECTS(options.sample_on == "cpu" || options.sample_on == "cuda",
                  "execution_options.sample_on must be cpu or cuda; got '{}'", options.sample_on);
  BULKGNN_EXPECTS(options.sample_on == "cpu" || model == backend::cuda,
                  "execution_options.sample_on {}: sampling follows execution_options.device {} "
                  "(give execution_options.device cuda to train on the GPU)",
                  options.sample_on, options.device);
  if (model != backend::cuda) {
    const executor host = rank_executor(model, "execution_options.device", options.threads);
    return {host, host};
  }
  executor on_gpu = rank_executor(model, "execution_options.device");
  executor sample = options.sample_on == "cuda"
                        ? rank_executor(model, "execution_options.device")
                        : kernels::make_executor(backend::cpu, options.threads);
  return {std::move(sample), std::move(on_gpu)};
}

execution_options sampling_on(std::string device, int threads) {
  const bool cuda = device == "cuda";
  return {.device = std::move(device), .sample_on = cuda ? "cuda" : "cpu", .threads = threads};
}

}  // namespace bulkgnn::session
