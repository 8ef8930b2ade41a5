#include "bulkgnn/core/executor_stage.hpp"

#include <utility>

namespace bulkgnn {

void device_stage_log::record(std::string stage, std::shared_ptr<void> begin,
                              std::shared_ptr<void> end) {
  pending_.push_back({std::move(stage), std::move(begin), std::move(end)});
}

void device_stage_log::collect(const executor& exec, stage_times& times) {
  const auto* device = exec.device();
  if (device == nullptr) return;
  for (const auto& e : pending_) times.add(e.stage, device->seconds_between(e.begin, e.end));
  pending_.clear();
}

executor_stage::executor_stage(const executor& exec, stage_times& host, device_stage_log& device,
                               std::string stage)
    : context_(exec.device()),
      host_(host),
      device_(device),
      stage_(std::move(stage)),
      begin_(context_ != nullptr ? context_->mark() : nullptr) {}

executor_stage::~executor_stage() {
  host_.add(stage_, watch_.seconds());
  // A mark that fails here (the device is gone) must not throw from a
  // destructor: the stage's device time is then left out.
  if (context_ == nullptr) return;
  try {
    device_.record(stage_, begin_, context_->mark());
  } catch (...) {
  }
}

}  // namespace bulkgnn
