#pragma once

#include "bulkgnn/core/rng.hpp"

#include <cstdint>
#include <utility>
#include <vector>

namespace bulkgnn::sampler::detail {

// Layer value of the epoch-shuffle stream, apart from every hop's streams.
constexpr std::uint32_t shuffle_stream = 0xFFFFFFFEu;

// Fisher-Yates over a stream keyed on (seed, epoch) alone, so every rank
// and pass shuffles an epoch's items alike.
template <class T>
void shuffle_for_epoch(std::vector<T>& items, std::uint32_t seed, std::uint32_t epoch) {
  if (items.size() < 2) return;
  philox_stream rng(rng_key{seed, epoch, no_minibatch, shuffle_stream, 0});
  for (std::size_t i = items.size() - 1; i > 0; --i)
    std::swap(items[i], items[rng.uniform_below(static_cast<std::uint32_t>(i + 1))]);
}

}  // namespace bulkgnn::sampler::detail
