#include "bulkgnn/sampler/epoch_plan.hpp"

#include "bulkgnn/core/error.hpp"

#include <utility>

#include "epoch_shuffle.hpp"

namespace bulkgnn::sampler {

namespace {

void check_plan_inputs(std::span<const vertex_t> train, std::int64_t batch_size) {
  BULKGNN_EXPECTS(batch_size > 0, "batch size must be positive, got {}", batch_size);
  BULKGNN_EXPECTS(!train.empty(), "the training split is empty");
  BULKGNN_EXPECTS(train.size() < (std::size_t{1} << 32), "too many training vertices");
}

}  // namespace

void batched_subgraphs::push(std::span<const vertex_t> minibatch_seeds,
                             std::span<const vertex_t> minibatch_vertices) {
  seeds.insert(seeds.end(), minibatch_seeds.begin(), minibatch_seeds.end());
  seed_offsets.push_back(static_cast<std::int64_t>(seeds.size()));
  vertices.insert(vertices.end(), minibatch_vertices.begin(), minibatch_vertices.end());
  vertex_offsets.push_back(static_cast<std::int64_t>(vertices.size()));
}

std::int64_t minibatch_count(std::span<const vertex_t> seeds, std::int64_t batch_size,
                             const subgraph_batches* batching) {
  if (seeds.empty()) return 0;
  if (batching == nullptr) return minibatch_count(std::ssize(seeds), batch_size);
  return batching->minibatch_count(seeds, batch_size);
}

epoch_plan::epoch_plan(std::span<const vertex_t> train, std::int64_t batch_size, std::uint32_t seed,
                       std::uint32_t epoch, std::shared_ptr<const subgraph_batches> batching)
    : batching_(std::move(batching)), epoch_(epoch) {
  check_plan_inputs(train, batch_size);
  if (batching_ != nullptr) {
    batched_subgraphs batched = batching_->batch(train, batch_size, seed, epoch);
    order_ = std::move(batched.seeds);
    offsets_ = std::move(batched.seed_offsets);
    subgraph_vertices_ = std::move(batched.vertices);
    subgraph_offsets_ = std::move(batched.vertex_offsets);
    BULKGNN_ASSERT(offsets_.size() == subgraph_offsets_.size() && offsets_.size() >= 2);
    return;
  }
  order_.assign(train.begin(), train.end());
  detail::shuffle_for_epoch(order_, seed, epoch);
  const auto n = static_cast<std::int64_t>(order_.size());
  for (std::int64_t begin = 0; begin < n; begin += batch_size) offsets_.push_back(begin);
  offsets_.push_back(n);
}

std::span<const vertex_t> epoch_plan::seeds(std::int64_t minibatch) const {
  BULKGNN_ASSERT(minibatch >= 0 && minibatch < num_minibatches());
  return std::span<const vertex_t>(order_).subspan(
      static_cast<std::size_t>(offsets_[minibatch]),
      static_cast<std::size_t>(offsets_[minibatch + 1] - offsets_[minibatch]));
}

std::span<const vertex_t> epoch_plan::subgraph(std::int64_t minibatch) const {
  BULKGNN_ASSERT(batching_ != nullptr && minibatch >= 0 && minibatch < num_minibatches());
  return std::span<const vertex_t>(subgraph_vertices_)
      .subspan(static_cast<std::size_t>(subgraph_offsets_[minibatch]),
               static_cast<std::size_t>(subgraph_offsets_[minibatch + 1] -
                                        subgraph_offsets_[minibatch]));
}

}  // namespace bulkgnn::sampler
