#include "bulkgnn/sampler/epoch_plan.hpp"

#include "bulkgnn/core/error.hpp"
#include "bulkgnn/core/rng.hpp"

#include <algorithm>
#include <utility>

namespace bulkgnn::sampler {

namespace {
// Layer value of the epoch-shuffle stream, apart from every hop's streams.
constexpr std::uint32_t shuffle_stream = 0xFFFFFFFEu;
}  // namespace

epoch_plan::epoch_plan(std::span<const vertex_t> train, std::int64_t batch_size, std::uint32_t seed,
                       std::uint32_t epoch)
    : order_(train.begin(), train.end()), batch_size_(batch_size), epoch_(epoch) {
  BULKGNN_EXPECTS(batch_size > 0, "batch size must be positive, got {}", batch_size);
  BULKGNN_EXPECTS(!train.empty(), "the training split is empty");
  BULKGNN_EXPECTS(train.size() < (std::size_t{1} << 32), "too many training vertices");
  philox_stream rng(rng_key{seed, epoch, no_minibatch, shuffle_stream, 0});
  for (std::size_t i = order_.size() - 1; i > 0; --i)
    std::swap(order_[i], order_[rng.uniform_below(static_cast<std::uint32_t>(i + 1))]);
}

std::int64_t epoch_plan::num_minibatches() const {
  return minibatch_count(static_cast<std::int64_t>(order_.size()), batch_size_);
}

std::span<const vertex_t> epoch_plan::seeds(std::int64_t minibatch) const {
  BULKGNN_ASSERT(minibatch >= 0 && minibatch < num_minibatches());
  const auto begin = minibatch * batch_size_;
  const auto end =
      std::min<std::int64_t>(begin + batch_size_, static_cast<std::int64_t>(order_.size()));
  return std::span<const vertex_t>(order_).subspan(begin, end - begin);
}

}  // namespace bulkgnn::sampler
