#include "bulkgnn/core/timer.hpp"
#include "bulkgnn/loader/stages.hpp"

#include <algorithm>
#include <memory>

namespace bulkgnn::loader {

bool link_shuffle_stage::process(stage_item item, stage_context& context) {
  const auto& start = std::get<epoch_start>(item);
  const stopwatch busy;
  auto plan = std::make_shared<const sampler::link_epoch_plan>(positives_, negatives_, options_,
                                                               start.epoch);
  context.add_busy(busy.seconds());
  for (std::int64_t first = 0; first < start.minibatches; first += bulk_)
    if (!context.emit(link_request{plan, first, std::min(bulk_, start.minibatches - first)}))
      return false;
  return true;
}

bool link_sample_stage::process(stage_item item, stage_context& context) {
  const stopwatch busy;
  const auto& request = std::get<link_request>(item);
  auto bulk = std::make_shared<sampler::link_bulk>(
      sampler::sample_links(sampler_, *request.plan, request.first, request.count, exclude_,
                            slice_, slices_));
  context.add_busy(busy.seconds());
  return context.emit(std::move(bulk));
}

}  // namespace bulkgnn::loader
