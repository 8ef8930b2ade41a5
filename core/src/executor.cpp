#include "bulkgnn/core/executor.hpp"

#include "bulkgnn/core/error.hpp"

#include <fmt/format.h>
#include <tbb/task_arena.h>

namespace bulkgnn {

std::string_view backend_name(backend kind) {
  switch (kind) {
    case backend::reference:
      return "reference";
    case backend::cpu:
      return "cpu";
    case backend::cuda:
      return "cuda";
  }
  return "unknown";
}

backend parse_backend(std::string_view name, std::string_view option) {
  for (const backend kind : {backend::cpu, backend::reference, backend::cuda})
    if (name == backend_name(kind)) return kind;
  throw option_error(fmt::format("{} must be cpu, reference or cuda; got '{}'", option, name));
}

struct executor::thread_arena {
  explicit thread_arena(int threads) : arena(threads) {}
  tbb::task_arena arena;
};

executor::executor(backend kind, int threads)
    : kind_(kind), threads_(threads), memory_(&host_memory()) {
  BULKGNN_EXPECTS(threads >= 0, "executor: threads must be >= 0 (0 = all cores), not {}", threads);
  BULKGNN_EXPECTS(kind != backend::cuda,
                  "executor: a cuda executor runs on a device; make it with "
                  "kernels::make_cuda_executor");
  if (threads > 0 && kind == backend::cpu) arena_ = std::make_shared<thread_arena>(threads);
}

executor::executor(std::shared_ptr<device_context> device)
    : kind_(backend::cuda), threads_(0), device_(std::move(device)) {
  BULKGNN_EXPECTS(device_ != nullptr, "executor: a cuda executor needs its device context");
  memory_ = &device_->device_memory();
}

bool executor::can_access(memory_space space) const {
  if (kind_ == backend::cuda) return space != memory_space::host;
  return host_accessible(space);
}

void executor::run_in_arena(const std::function<void()>& f) const { arena_->arena.execute(f); }

void executor::synchronize() const {
  if (device_) device_->synchronize();
}

std::string executor::device_name() const {
  return device_ ? std::string(device_->device_name()) : std::string("cpu");
}

}  // namespace bulkgnn
