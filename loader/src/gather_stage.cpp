#include "bulkgnn/core/timer.hpp"
#include "bulkgnn/kernels/spmm.hpp"
#include "bulkgnn/loader/stages.hpp"

namespace bulkgnn::loader {

namespace {

std::size_t input_entries(const ready_minibatch& mb) {
  return mb.batch.input_nodes.size() * static_cast<std::size_t>(mb.feature_columns);
}

}  // namespace

bool gather_stage::process(stage_item item, stage_context& context) {
  if (const auto* links = std::get_if<std::shared_ptr<sampler::link_bulk>>(&item)) {
    for (std::int64_t j = 0; j < (*links)->count(); ++j) {
      const stopwatch busy;
      auto mb = gather((*links)->nodes, j);
      mb.link = std::move((*links)->seeds[static_cast<std::size_t>(j)]);
      context.add_busy(busy.seconds());
      if (!context.emit(std::move(mb))) return false;
    }
    return true;
  }
  const auto& bulk = *std::get<std::shared_ptr<sampler::bulk_sample>>(item);
  for (std::int64_t j = 0; j < bulk.count(); ++j) {
    const stopwatch busy;
    auto mb = gather(bulk, j);
    context.add_busy(busy.seconds());
    if (!context.emit(std::move(mb))) return false;
  }
  return true;
}

ready_minibatch gather_stage::gather(const sampler::bulk_sample& bulk, std::int64_t j) {
  ready_minibatch mb;
  mb.batch = bulk.extract(j, source_.labels, exec_);
  const auto rows = static_cast<std::int64_t>(mb.batch.input_nodes.size());
  if (!host_accessible(exec_.memory().space())) {
    // A device executor gathers into device memory, where the minibatch
    // already is.
    mb.feature_columns = source_.features.cols;
    mb.placed_features = buffer<float>(input_entries(mb), exec_.memory());
    kernels::gather_dense_rows(exec_, source_.features, mb.batch.input_nodes,
                               {rows, mb.feature_columns, std::span<float>(mb.placed_features),
                                mb.placed_features.space()});
    // Not synchronize(): the sample stage queues the next bulk meanwhile.
    exec_.device()->wait_until(exec_.device()->mark());
    // The features were normalised where they were placed (the loader
    // refuses a normalizer on a device executor): the host step below
    // would write into the empty host buffer.
    return mb;
  } else if (source_.remote_features != nullptr &&
             source_.remote_features->placed_memory() != nullptr) {
    // Rows moved GPU to GPU land normalised where the model reads them.
    mb.feature_columns = source_.remote_features->columns();
    mb.placed_features =
        buffer<float>(input_entries(mb), *source_.remote_features->placed_memory());
    source_.remote_features->fetch_placed(
        mb.batch.input_nodes, {rows, mb.feature_columns, std::span<float>(mb.placed_features),
                               mb.placed_features.space()});
    return mb;
  } else if (source_.remote_features != nullptr) {
    mb.feature_columns = source_.remote_features->columns();
    mb.features = buffers_.take(input_entries(mb));
    source_.remote_features->fetch(mb.batch.input_nodes,
                                   {rows, mb.feature_columns, mb.features.span()});
  } else if (!source_.features.empty()) {
    mb.feature_columns = source_.features.cols;
    mb.features = buffers_.take(input_entries(mb));
    kernels::gather_dense_rows(exec_, source_.features, mb.batch.input_nodes,
                               {rows, mb.feature_columns, mb.features.span()});
  }
  if (source_.normalizer != nullptr && mb.feature_columns > 0)
    source_.normalizer->apply(mb.batch.input_nodes, {rows, mb.feature_columns, mb.features.span()});
  return mb;
}

}  // namespace bulkgnn::loader
