#include "minibatch_loaders.hpp"

#include "bulkgnn/core/error.hpp"
#include "bulkgnn/kernels/devices.hpp"
#include "bulkgnn/loader/host_to_device.hpp"
#include "bulkgnn/trainer/matrix.hpp"
#include "subgraph_batching.hpp"

#include <algorithm>

namespace bulkgnn::session::detail {

using trainer::model_executor;
using trainer::train_options;
using trainer::training_data;

minibatch_loaders::minibatch_loaders(const training_data& ds, const train_options& o,
                                     const loader::row_normalizer* normalizer)
    : ds_(ds),
      options_(o),
      normalizer_(normalizer),
      layout_(layout_for(ds, o)),
      device_copies_(device_copies_for(ds, o, layout_, normalizer)),
      sampler_(sampler_for()),
      subgraphs_(subgraphs_for(ds.graph,
                               o.parallel != nullptr && o.parallel->rows != nullptr
                                   ? o.parallel->rows->num_vertices()
                                   : ds.graph.rows,
                               o.sampling, o.loading.batch_size, o.exec)),
      loader_(source(), *sampler_, loading_for(o.loading), o.exec) {
  if (layout_.features_between_gpus) {
    // A stream of its own: the gather stage fetches while the model trains.
    const auto fetch_exec = kernels::make_cuda_executor(model_executor(o).device()->device());
    const bool placed = o.parallel->features->place_on_device(fetch_exec, normalizer);
    BULKGNN_EXPECTS(placed, "train: the feature fetcher cannot move rows between GPUs");
  }
}

trainer::minibatch_sources minibatch_loaders::sources() {
  trainer::minibatch_sources s{
      .train = loader_,
      .make_eval = [this]() -> loader::minibatch_source& { return eval_loader(); },
      .sampler = &*sampler_,
      .seed_loss_weights = subgraphs_ ? subgraphs_->loss_weights() : std::span<const float>{},
      .normalizer = normalizer_,
      .evaluation = layout_.evaluation};
  // The copies are complete: copying into device memory waits for the copy.
  if (layout_.evaluation_reads_sampler_copies) {
    s.device_graph = device_copies_->graph.view();
    s.device_features = {ds_.features.rows, ds_.features.cols,
                         std::span<const float>(device_copies_->features), memory_space::device};
  }
  return s;
}

loader::minibatch_source& minibatch_loaders::eval_loader() {
  if (!eval_loader_) {
    auto options = options_.loading;
    options.max_minibatches = 0;
    eval_sampler_ = sampler_for();
    eval_loader_.emplace(source(), *eval_sampler_, loading_for(options), options_.exec);
  }
  return *eval_loader_;
}

std::optional<minibatch_loaders::device_copies> minibatch_loaders::device_copies_for(
    const training_data& ds, const train_options& o, const training_layout& placement,
    const loader::row_normalizer* normalizer) {
  if (!placement.sample_on_gpu) return std::nullopt;
  const auto resource = [&](memory_space space) -> memory_resource& {
    return space == memory_space::device ? o.exec.memory() : o.exec.device()->pinned_memory();
  };
  device_copies copies;
  copies.graph = copy_to(ds.graph, resource(placement.graph));
  if (normalizer == nullptr) {
    copies.features = copy_to(ds.features.data, resource(placement.features));
  } else {
    trainer::matrix normalized(ds.features.rows, ds.features.cols);
    std::copy(ds.features.data.begin(), ds.features.data.end(), normalized.data().begin());
    normalizer->apply_to_all(normalized.view());
    copies.features =
        copy_to(std::span<const float>(normalized.data()), resource(placement.features));
  }
  return copies;
}

std::unique_ptr<sampler::bulk_sampler> minibatch_loaders::sampler_for() const {
  const auto& o = options_;
  if (o.parallel != nullptr && o.parallel->rows != nullptr)
    return std::make_unique<sampler::bulk_sampler>(*o.parallel->rows, o.sampling, o.exec);
  return std::make_unique<sampler::bulk_sampler>(
      device_copies_ ? device_copies_->graph.view() : ds_.graph, o.sampling, o.exec);
}

loader::graph_source minibatch_loaders::source() const {
  if (device_copies_)
    return {.graph = device_copies_->graph.view(),
            .features = {ds_.features.rows, ds_.features.cols,
                         std::span<const float>(device_copies_->features),
                         device_copies_->features.space()},
            .labels = ds_.labels};
  if (options_.parallel == nullptr)
    return {.graph = ds_.graph,
            .features = ds_.features,
            .labels = ds_.labels,
            .normalizer = normalizer_};
  auto* remote = options_.parallel->features;
  return {.graph = ds_.graph,
          .features = remote ? dense_view<const float>{} : ds_.features,
          .labels = ds_.labels,
          .rows = options_.parallel->rows,
          .remote_features = remote,
          .normalizer = normalizer_};
}

loader::loader_options minibatch_loaders::loading_for(loader::loader_options l) const {
  const auto& o = options_;
  l.subgraphs = subgraphs_;
  if (layout_.host_to_device) add_host_to_device(model_executor(o), l);
  if (o.parallel == nullptr) return l;
  l.slice = o.parallel->ranks->rank();
  l.slices = o.parallel->ranks->size();
  l.split_ranks = o.parallel->sampling;
  l.on_failure = o.parallel->abort_all;
  return l;
}

void minibatch_loaders::add_host_to_device(const executor& model, loader::loader_options& l) {
  const auto copy_exec = kernels::make_cuda_executor(model.device()->device());
  l.feature_memory = &copy_exec.device()->pinned_memory();
  l.host_to_device = [copy_exec] { return loader::make_host_to_device_stage(copy_exec); };
}

}  // namespace bulkgnn::session::detail
