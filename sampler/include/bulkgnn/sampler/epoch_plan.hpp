#pragma once

#include "bulkgnn/core/types.hpp"

#include <cstdint>
#include <span>
#include <vector>

namespace bulkgnn::sampler {

// Minibatches of batch_size (> 0) that `seeds` (> 0) vertices make, the last
// one possibly smaller.
[[nodiscard]] constexpr std::int64_t minibatch_count(std::int64_t seeds, std::int64_t batch_size) {
  return (seeds - 1) / batch_size + 1;
}

// The seed vertices of every minibatch of one epoch: the training vertices in
// an order shuffled by a stream keyed on (seed, epoch) alone, cut into
// consecutive minibatches of batch_size (the last one may be smaller).
class epoch_plan {
 public:
  epoch_plan(std::span<const vertex_t> train, std::int64_t batch_size, std::uint32_t seed,
             std::uint32_t epoch);

  [[nodiscard]] std::uint32_t epoch() const { return epoch_; }
  [[nodiscard]] std::int64_t num_minibatches() const;
  [[nodiscard]] std::span<const vertex_t> seeds(std::int64_t minibatch) const;

 private:
  std::vector<vertex_t> order_;
  std::int64_t batch_size_;
  std::uint32_t epoch_;
};

}  // namespace bulkgnn::sampler
