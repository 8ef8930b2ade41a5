#include "bulkgnn/core/timer.hpp"

namespace bulkgnn {

void stage_times::add(const std::string& stage, double seconds) { seconds_[stage] += seconds; }

double stage_times::get(const std::string& stage) const {
  auto it = seconds_.find(stage);
  return it == seconds_.end() ? 0.0 : it->second;
}

}  // namespace bulkgnn
