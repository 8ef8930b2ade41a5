#include "bulkgnn/sampler/bulk_sampler.hpp"

#include "bulkgnn/core/error.hpp"

#include <utility>

namespace bulkgnn::sampler {

bulk_sampler::bulk_sampler(csr_view graph, sampler_options options, executor exec)
    : own_rows_(std::make_unique<local_rows>(graph)),
      context_(
          new sampling_context{.rows = *own_rows_, .options = std::move(options), .exec = exec}) {
  initialise();
}

bulk_sampler::bulk_sampler(row_source& rows, sampler_options options, executor exec)
    : context_(new sampling_context{.rows = rows, .options = std::move(options), .exec = exec}) {
  initialise();
}

void bulk_sampler::initialise() {
  validate(context_->options, context_->rows.weighted());
  BULKGNN_EXPECTS(
      context_->exec.kind() != backend::cuda || context_->rows.whole_graph() != nullptr,
      "bulk_sampler: the cuda back end samples a graph held whole in this process only so far");
  const auto& entry = find_sampler(context_->options.kind);
  BULKGNN_EXPECTS(!entry.host_only || context_->exec.kind() != backend::cuda,
                  "sampler_options.kind: the {} sampler has no GPU kernel yet; sample on the host "
                  "({})",
                  entry.name,
                  entry.draws_subgraphs
                      ? "bulkgnn's trainer then trains on the host too: the normalised loss is a "
                        "host kernel; a PyTorch model fed from Python may train anywhere"
                      : "the model may still train on the GPU");
  algorithm_ = entry.make(*context_);
}

bulk_sample bulk_sampler::sample(const epoch_plan& plan, std::int64_t first_minibatch,
                                 std::int64_t count) {
  BULKGNN_EXPECTS(
      first_minibatch >= 0 && count > 0 && first_minibatch + count <= plan.num_minibatches(),
      "bulk_sampler::sample: minibatches [{}, {}) outside the epoch's {}", first_minibatch,
      first_minibatch + count, plan.num_minibatches());
  segmented_vertices seeds;
  std::vector<std::int64_t> ids;
  for (std::int64_t j = 0; j < count; ++j) {
    seeds.push_segment(plan.seeds(first_minibatch + j));
    ids.push_back(first_minibatch + j);
  }
  const plan_subgraphs scope(*context_, plan, first_minibatch, count);
  auto bulk = sample(plan.epoch(), std::move(seeds), ids);
  bulk.whole_seeds = whole_seeds_of(plan, first_minibatch, count);
  return bulk;
}

std::vector<std::int64_t> whole_seeds_of(const epoch_plan& plan, std::int64_t first,
                                         std::int64_t count) {
  std::vector<std::int64_t> seeds;
  for (std::int64_t j = first; j < first + count; ++j)
    seeds.push_back(static_cast<std::int64_t>(plan.seeds(j).size()));
  return seeds;
}

bulk_sampler::plan_subgraphs::plan_subgraphs(sampling_context& context, const epoch_plan& plan,
                                             std::int64_t first, std::int64_t count)
    : context_(context) {
  if (plan.batching() == nullptr) return;
  for (std::int64_t j = first; j < first + count; ++j) subgraphs_.push_segment(plan.subgraph(j));
  context_.subgraphs = &subgraphs_;
  context_.batching = plan.batching();
}

bulk_sampler::plan_subgraphs::~plan_subgraphs() {
  context_.subgraphs = nullptr;
  context_.batching = nullptr;
}

bulk_sample bulk_sampler::sample(std::uint32_t epoch, segmented_vertices seeds,
                                 std::span<const std::int64_t> minibatch_ids) {
  BULKGNN_EXPECTS(static_cast<std::int64_t>(minibatch_ids.size()) == seeds.segments(),
                  "bulk_sampler::sample: {} minibatch ids for {} seed segments",
                  minibatch_ids.size(), seeds.segments());
  for (const auto id : minibatch_ids)
    BULKGNN_EXPECTS(id >= 0 && id <= 0xFFFFFFFFll, "bulk_sampler::sample: minibatch id {}", id);
  const vertex_t n = context_->rows.num_vertices();
  for (const vertex_t v : seeds.vertices)
    BULKGNN_EXPECTS(v >= 0 && v < n, "seed vertex {} is outside the graph's {} vertices", v, n);
  return algorithm_->sample(epoch, std::move(seeds), minibatch_ids);
}

bulk_sample bulk_sampler::sample(std::uint32_t epoch, segmented_vertices seeds,
                                 std::span<const std::int64_t> minibatch_ids,
                                 const kernels::excluded_edges& excluded) {
  BULKGNN_EXPECTS(
      algorithm_->leaves_out_edges(),
      "sampler_options.kind: the {} sampler cannot leave a link minibatch's own "
      "edges out of its blocks yet; use a node-wise or layer-wise sampler (sage, labor, "
      "random-walk, ladies, fastgcn)",
      find_sampler(context_->options.kind).name);
  BULKGNN_EXPECTS(excluded.segments() == seeds.segments(),
                  "bulk_sampler::sample: excluded edges for {} minibatches, seeds for {}",
                  excluded.segments(), seeds.segments());
  struct clear_on_exit {
    sampling_context& context;
    ~clear_on_exit() { context.excluded = nullptr; }
  } scope{*context_};
  context_->excluded = &excluded;
  return sample(epoch, std::move(seeds), minibatch_ids);
}

const stage_times& bulk_sampler::device_times() {
  context_->device_log.collect(context_->exec, device_times_);
  return device_times_;
}

}  // namespace bulkgnn::sampler
