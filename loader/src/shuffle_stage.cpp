#include "bulkgnn/core/timer.hpp"
#include "bulkgnn/loader/stages.hpp"
#include "bulkgnn/sampler/epoch_plan.hpp"

#include <algorithm>
#include <memory>

namespace bulkgnn::loader {

bool shuffle_stage::process(stage_item item, stage_context& context) {
  const auto& start = std::get<epoch_start>(item);
  const stopwatch busy;
  auto plan = std::make_shared<const sampler::epoch_plan>(start.seeds, batch_size_, sampler_seed_,
                                                          start.epoch, subgraphs_);
  context.add_busy(busy.seconds());
  for (std::int64_t first = 0; first < start.minibatches; first += bulk_) {
    if (!context.emit(bulk_request{plan, first, std::min(bulk_, start.minibatches - first)}))
      return false;
  }
  return true;
}

}  // namespace bulkgnn::loader
