#pragma once

#include "bulkgnn/core/buffer_pool.hpp"
#include "bulkgnn/core/dense.hpp"
#include "bulkgnn/sampler/bulk_sampler.hpp"
#include "bulkgnn/sampler/epoch_plan.hpp"
#include "bulkgnn/sampler/link_seeds.hpp"
#include "bulkgnn/sampler/minibatch.hpp"

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <variant>

namespace bulkgnn::loader {

// A minibatch ready to train on: the sampled structure plus the features of
// its input vertices gathered into one contiguous row-major buffer. The buffer
// returns to the loader's pool when the minibatch is dropped, so hold on to a
// minibatch only as long as its features are needed.
struct ready_minibatch {
  sampler::minibatch batch;
  pooled_buffer<float> features;  // batch.input_nodes.size() × feature_columns
  std::int64_t feature_columns = 0;
  // The same rows once the host_to_device stage has copied the minibatch
  // into a device's memory (`features` is then empty and back in its pool).
  buffer<float> placed_features;
  // A link minibatch's supervision (its positives, negatives and labels);
  // batch.seeds are its link->nodes. Empty for node minibatches.
  std::optional<sampler::link_seeds> link;

  [[nodiscard]] dense_view<const float> input_features() const {
    const auto rows = static_cast<std::int64_t>(batch.input_nodes.size());
    if (!placed_features.empty())
      return {rows, feature_columns, std::span<const float>(placed_features),
              placed_features.space()};
    return {rows, feature_columns, features.span()};
  }
  [[nodiscard]] std::size_t size_bytes() const {
    return batch.size_bytes() + features.size() * sizeof(float) + placed_features.size_bytes() +
           (link ? link->size_bytes() : 0);
  }
};

// Where one stage spent the epoch: working, waiting for input from the stage
// before it (starved), and waiting for room in the queue after it (blocked by
// a slower consumer).
struct stage_report {
  std::string name;
  double busy_seconds = 0;
  double input_wait_seconds = 0;
  double output_wait_seconds = 0;
  std::int64_t items = 0;
  // The most bytes its output queue held at once (0 where it has no byte
  // bound: loader_options.queue_bytes).
  std::size_t peak_output_bytes = 0;
};

// The one item the first stage receives: the epoch to run over these seeds.
// `seeds` stays valid for the whole epoch.
struct epoch_start {
  std::span<const vertex_t> seeds;
  std::uint32_t epoch = 0;
  std::int64_t minibatches = 0;  // how many of the plan's minibatches to hand out
};

// Minibatches [first, first + count) of an epoch's plan, to be sampled as one bulk.
struct bulk_request {
  std::shared_ptr<const sampler::epoch_plan> plan;
  std::int64_t first = 0;
  std::int64_t count = 0;
};

// Link minibatches [first, first + count) of an epoch's link plan, as one bulk.
struct link_request {
  std::shared_ptr<const sampler::link_epoch_plan> plan;
  std::int64_t first = 0;
  std::int64_t count = 0;
};

// What travels through the queues between stages, in pipeline order:
// epoch_start → shuffle → bulk_request → sample → bulk_sample → gather →
// ready_minibatch → (host-to-device) → ready_minibatch → consumer; a link
// loader's shuffle and sample stages pass link_request and link_bulk instead.
using stage_item = std::variant<epoch_start, bulk_request, std::shared_ptr<sampler::bulk_sample>,
                                ready_minibatch, link_request, std::shared_ptr<sampler::link_bulk>>;

// A stage's view of the pipeline while it handles one item.
class stage_context {
 public:
  virtual ~stage_context() = default;
  // Hands an item to the next stage, blocking while its queue is full; false
  // once the pipeline is stopping (drop the rest of the item then).
  [[nodiscard]] virtual bool emit(stage_item item) = 0;
  // Charges working time (and the items it produced or handled) to the stage.
  virtual void add_busy(double seconds, std::int64_t items = 1) = 0;
};

// One step of the loader's pipeline. The pipeline runs every stage on its own
// thread, feeding it the items of the queue before it one at a time; a stage
// reports its working time through the context, the pipeline charges it the
// time spent waiting on either queue. A stage that throws stops the pipeline
// and its exception reaches the consumer.
class stage {
 public:
  virtual ~stage() = default;
  [[nodiscard]] virtual std::string name() const = 0;
  // Handles one input item, emitting zero or more items; false when an emit
  // was refused (the pipeline is stopping).
  [[nodiscard]] virtual bool process(stage_item item, stage_context& context) = 0;
};

}  // namespace bulkgnn::loader
