#include "bulkgnn/session/loading.hpp"

#include "bulkgnn/core/error.hpp"
#include "bulkgnn/core/executor.hpp"
#include "bulkgnn/sampler/bulk_sampler.hpp"
#include "bulkgnn/sampler/epoch_plan.hpp"
#include "bulkgnn/session/layout.hpp"
#include "subgraph_batching.hpp"

#include <algorithm>
#include <numeric>
#include <span>
#include <unordered_map>
#include <utility>

namespace bulkgnn::session {
namespace {

// Where the minibatches are made and handed out: the host back ends, or
// with device cuda this process's GPU, which samples and gathers there.
executor loading_executor(const execution_options& execution) {
  const backend kind = parse_backend(execution.device, "execution_options.device");
  if (kind != backend::cuda) return executors_for(execution).sample;
  return single_executor(execution.device, execution.threads);
}

// Link minibatches leave their own edges out with a host kernel.
executor host_executor(const execution_options& execution) {
  const backend kind = parse_backend(execution.device, "execution_options.device");
  BULKGNN_EXPECTS(kind != backend::cuda,
                  "execution_options.device 'cuda': link minibatches are sampled on the host "
                  "back ends so far (each leaves its own edges out there); use cpu");
  return executors_for(execution).sample;
}

// The loader always shuffles an epoch's seeds by (seed, epoch). Its shuffle
// moves positions without looking at the values, so handing it the seeds
// placed where that shuffle takes each position from gives them back in the
// caller's order: an unshuffled epoch with the same minibatches and draws.
std::vector<vertex_t> placed_for_shuffle(std::span<const vertex_t> seeds, std::int64_t batch_size,
                                         std::uint32_t seed, std::uint32_t epoch) {
  std::vector<vertex_t> positions(seeds.size());
  std::iota(positions.begin(), positions.end(), vertex_t{0});
  const sampler::epoch_plan plan(positions, batch_size, seed, epoch);
  std::vector<vertex_t> placed(seeds.size());
  std::size_t i = 0;
  for (std::int64_t j = 0; j < plan.num_minibatches(); ++j)
    for (const vertex_t from : plan.seeds(j)) placed[static_cast<std::size_t>(from)] = seeds[i++];
  return placed;
}

loader::loader_options with_subgraphs(loader::loader_options options,
                                      std::shared_ptr<const sampler::subgraph_batches> subgraphs) {
  options.subgraphs = std::move(subgraphs);
  return options;
}

}  // namespace

seed_positions::seed_positions(std::int64_t seeds, std::int64_t batch_size,
                               std::uint32_t sampler_seed, std::uint32_t epoch, bool shuffle,
                               int slice, int slices)
    : order_(static_cast<std::size_t>(seeds)), slice_(slice), slices_(slices) {
  std::iota(order_.begin(), order_.end(), vertex_t{0});
  for (std::int64_t first = 0; first < seeds; first += batch_size) offsets_.push_back(first);
  offsets_.push_back(seeds);
  if (!shuffle) return;  // placed_for_shuffle hands the seeds out in order
  const sampler::epoch_plan plan(order_, batch_size, sampler_seed, epoch);
  std::vector<vertex_t> shuffled;
  shuffled.reserve(order_.size());
  for (std::int64_t j = 0; j < plan.num_minibatches(); ++j)
    for (const auto position : plan.seeds(j)) shuffled.push_back(position);
  order_ = std::move(shuffled);
}

seed_positions::seed_positions(std::shared_ptr<const vertex_positions> position_of)
    : position_of_(std::move(position_of)) {}

std::vector<std::int64_t> seed_positions::at(const sampler::minibatch& batch) const {
  if (position_of_) {
    std::vector<std::int64_t> positions;
    for (const vertex_t v : copy_to_host(batch.seeds)) {
      const auto found = position_of_->find(v);
      BULKGNN_ASSERT(found != position_of_->end());
      positions.push_back(found->second);
    }
    return positions;
  }
  const auto first = offsets_[batch.index];
  const auto [begin, end] =
      sampler::slice_range(offsets_[batch.index + 1] - first, slice_, slices_);
  return {order_.begin() + first + begin, order_.begin() + first + end};
}

seed_positions minibatch_loading::positions(std::uint32_t epoch) const {
  const auto& o = loader_.options();
  if (subgraphs_) return seed_positions(subgraph_seed_positions_);
  return {static_cast<std::int64_t>(seeds_.size()),
          o.batch_size,
          sampler_.options().seed,
          epoch,
          shuffle_,
          o.slice,
          o.slices};
}

minibatch_loading::gpu_copies::gpu_copies(const data::dataset& ds, const executor& exec) {
  const auto resource = [&](double bytes, double share) -> memory_resource& {
    return gpu_space_for(exec, bytes, share) == memory_space::device
               ? exec.memory()
               : exec.device()->pinned_memory();
  };
  const csr_view g = ds.graph();
  graph = copy_to(g, resource(static_cast<double>(g.indptr.size_bytes() + g.indices.size_bytes()),
                              graph_share_of_gpu));
  const auto f = ds.features();
  features =
      copy_to(f.data, resource(static_cast<double>(f.data.size_bytes()), feature_share_of_gpu));
}

loader::graph_source minibatch_loading::source() const {
  if (!gpu_) return {dataset_->graph(), dataset_->features(), dataset_->labels()};
  const auto f = dataset_->features();
  return {gpu_->graph.view(),
          {f.rows, f.cols, std::span<const float>(gpu_->features), gpu_->features.space()},
          dataset_->labels()};
}

minibatch_loading::minibatch_loading(std::shared_ptr<const data::dataset> dataset,
                                     std::vector<vertex_t> seeds, const loading_plan& plan)
    : dataset_(std::move(dataset)),
      seeds_(std::move(seeds)),
      shuffle_(plan.shuffle),
      exec_(loading_executor(plan.execution)),
      gpu_(exec_.kind() == backend::cuda
               ? std::optional<gpu_copies>(std::in_place, *dataset_, exec_)
               : std::nullopt),
      sampler_(source().graph, plan.sampling, exec_),
      subgraphs_(detail::subgraphs_for(dataset_->graph(), dataset_->num_nodes(), plan.sampling,
                                       plan.loading.batch_size, exec_)),
      loader_(source(), sampler_, with_subgraphs(plan.loading, subgraphs_), exec_) {
  BULKGNN_EXPECTS(!subgraphs_ || shuffle_,
                  "loading_plan.shuffle: the {} sampler's minibatches are subgraphs it shuffles "
                  "or draws; an unshuffled order applies to samplers that batch seeds",
                  plan.sampling.kind);
  // Refuses seeds it cannot batch (Cluster-GCN: a seed listed twice) here,
  // not at the first epoch.
  if (!subgraphs_) return;
  (void)sampler::epoch_plan(seeds_, plan.loading.batch_size, plan.sampling.seed, 0, subgraphs_);
  auto position_of = std::make_shared<seed_positions::vertex_positions>();
  for (std::size_t i = 0; i < seeds_.size(); ++i)
    position_of->emplace(seeds_[i], static_cast<vertex_t>(i));
  subgraph_seed_positions_ = std::move(position_of);
}

loader::epoch_stream minibatch_loading::epoch(std::uint32_t epoch) {
  if (shuffle_) return loader_.epoch(seeds_, epoch);
  return loader_.epoch(
      placed_for_shuffle(seeds_, loader_.options().batch_size, sampler_.options().seed, epoch),
      epoch);
}

link_loading::link_loading(std::shared_ptr<const data::dataset> dataset,
                           std::vector<vertex_t> source, std::vector<vertex_t> target,
                           std::vector<float> label, const link_plan& plan)
    : dataset_(std::move(dataset)),
      source_(std::move(source)),
      target_(std::move(target)),
      label_(std::move(label)),
      exec_(host_executor(plan.nodes.execution)),
      sampler_(dataset_->graph(), plan.nodes.sampling, exec_),
      loader_({dataset_->graph(), dataset_->features(), dataset_->labels()}, sampler_,
              loader::link_task{.positives = {source_, target_, label_},
                                .negatives = plan.negatives,
                                .exclude = plan.exclude,
                                .shuffle = plan.nodes.shuffle},
              plan.nodes.loading, exec_) {}

loader::epoch_stream link_loading::epoch(std::uint32_t epoch) { return loader_.epoch({}, epoch); }

std::int64_t link_loading::minibatches_per_epoch() const {
  const auto& options = loader_.options();
  const auto all =
      sampler::minibatch_count(static_cast<std::int64_t>(source_.size()), options.batch_size);
  return options.max_minibatches > 0 ? std::min(all, options.max_minibatches) : all;
}

std::int64_t minibatch_loading::minibatches_per_epoch() const {
  const auto& options = loader_.options();
  const auto all = sampler::minibatch_count(seeds_, options.batch_size, subgraphs_.get());
  return options.max_minibatches > 0 ? std::min(all, options.max_minibatches) : all;
}

}  // namespace bulkgnn::session
