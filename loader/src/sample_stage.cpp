#include "bulkgnn/core/timer.hpp"
#include "bulkgnn/loader/stages.hpp"

#include <memory>

namespace bulkgnn::loader {

bool sample_stage::process(stage_item item, stage_context& context) {
  const stopwatch busy;
  const auto& request = std::get<bulk_request>(item);
  auto bulk = std::make_shared<sampler::bulk_sample>(
      sampler_.sample_slices(*request.plan, request.first, request.count, split_));
  context.add_busy(busy.seconds());
  return context.emit(std::move(bulk));
}

}  // namespace bulkgnn::loader
