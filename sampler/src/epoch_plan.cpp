#include "bulkgnn/sampler/epoch_plan.hpp"

#include "bulkgnn/core/error.hpp"
#include "bulkgnn/core/rng.hpp"

#include <algorithm>
#include <numeric>
#include <utility>

namespace bulkgnn::sampler {

namespace {

// Layer value of the epoch-shuffle stream, apart from every hop's streams.
constexpr std::uint32_t shuffle_stream = 0xFFFFFFFEu;

template <class T>
void shuffle(std::vector<T>& items, std::uint32_t seed, std::uint32_t epoch) {
  if (items.size() < 2) return;
  philox_stream rng(rng_key{seed, epoch, no_minibatch, shuffle_stream, 0});
  for (std::size_t i = items.size() - 1; i > 0; --i)
    std::swap(items[i], items[rng.uniform_below(static_cast<std::uint32_t>(i + 1))]);
}

void check_plan_inputs(std::span<const vertex_t> train, std::int64_t batch_size) {
  BULKGNN_EXPECTS(batch_size > 0, "batch size must be positive, got {}", batch_size);
  BULKGNN_EXPECTS(!train.empty(), "the training split is empty");
  BULKGNN_EXPECTS(train.size() < (std::size_t{1} << 32), "too many training vertices");
}

// The clusters of a clustered epoch: the training vertices of each cluster
// (ascending), and the units a plan shuffles: a cluster holding training
// vertices followed by the clusters without any that go with it.
struct cluster_units {
  std::vector<std::vector<vertex_t>> targets;  // by cluster
  std::vector<std::vector<int>> units;
};

// Which clusters hold a seed.
std::vector<bool> seeded_clusters(std::span<const vertex_t> train,
                                  const vertex_clusters& clusters) {
  std::vector<bool> holds(static_cast<std::size_t>(clusters.count()));
  for (const vertex_t v : train) {
    BULKGNN_EXPECTS(v >= 0 && v < clusters.num_vertices(),
                    "epoch_plan: seed vertex {} is outside the clustered graph's {} vertices", v,
                    clusters.num_vertices());
    holds[clusters.cluster_of(v)] = true;
  }
  return holds;
}

cluster_units units_of(std::span<const vertex_t> train, const vertex_clusters& clusters) {
  const std::vector<bool> holds = seeded_clusters(train, clusters);
  cluster_units u;
  u.targets.resize(holds.size());
  for (const vertex_t v : train) u.targets[clusters.cluster_of(v)].push_back(v);
  std::vector<int> unit_of(u.targets.size(), -1);
  for (std::size_t c = 0; c < u.targets.size(); ++c) {
    auto& t = u.targets[c];
    std::sort(t.begin(), t.end());
    BULKGNN_EXPECTS(std::adjacent_find(t.begin(), t.end()) == t.end(),
                    "epoch_plan: seed vertex {} is listed twice",
                    *std::adjacent_find(t.begin(), t.end()));
    if (holds[c]) {
      unit_of[c] = static_cast<int>(u.units.size());
      u.units.push_back({static_cast<int>(c)});
    }
  }
  // A cluster linked to none that hold seeds goes round-robin over them.
  int unlinked = 0;
  for (int c = 0; c < clusters.count(); ++c) {
    if (holds[c]) continue;
    const int host = clusters.most_linked(c, holds);
    const int unit = host >= 0 ? unit_of[host] : unlinked++ % static_cast<int>(u.units.size());
    u.units[unit].push_back(c);
  }
  return u;
}

}  // namespace

std::int64_t minibatch_count(std::span<const vertex_t> seeds, std::int64_t batch_size,
                             const vertex_clusters* clusters) {
  if (seeds.empty()) return 0;
  if (clusters == nullptr) return minibatch_count(std::ssize(seeds), batch_size);
  const auto holds = seeded_clusters(seeds, *clusters);
  return minibatch_count(std::count(holds.begin(), holds.end(), true), batch_size);
}

epoch_plan::epoch_plan(std::span<const vertex_t> train, std::int64_t batch_size, std::uint32_t seed,
                       std::uint32_t epoch, const vertex_clusters* clusters)
    : epoch_(epoch) {
  check_plan_inputs(train, batch_size);
  if (clusters != nullptr) {
    batch_clusters(train, *clusters, batch_size, seed);
    return;
  }
  order_.assign(train.begin(), train.end());
  shuffle(order_, seed, epoch);
  batch_seeds(batch_size);
}

void epoch_plan::batch_seeds(std::int64_t batch_size) {
  const auto n = static_cast<std::int64_t>(order_.size());
  for (std::int64_t begin = 0; begin < n; begin += batch_size) offsets_.push_back(begin);
  offsets_.push_back(n);
}

void epoch_plan::batch_clusters(std::span<const vertex_t> train, const vertex_clusters& clusters,
                                std::int64_t batch_size, std::uint32_t seed) {
  auto [targets, units] = units_of(train, clusters);
  shuffle(units, seed, epoch_);
  offsets_.push_back(0);
  subgraph_offsets_.push_back(0);
  for (std::size_t first = 0; first < units.size(); first += static_cast<std::size_t>(batch_size)) {
    const auto last = std::min(units.size(), first + static_cast<std::size_t>(batch_size));
    const auto subgraph_begin = static_cast<std::ptrdiff_t>(subgraph_vertices_.size());
    for (std::size_t i = first; i < last; ++i) {
      order_.insert(order_.end(), targets[units[i].front()].begin(),
                    targets[units[i].front()].end());
      for (const int c : units[i])
        subgraph_vertices_.insert(subgraph_vertices_.end(), clusters.members(c).begin(),
                                  clusters.members(c).end());
    }
    std::sort(subgraph_vertices_.begin() + subgraph_begin, subgraph_vertices_.end());
    offsets_.push_back(static_cast<std::int64_t>(order_.size()));
    subgraph_offsets_.push_back(static_cast<std::int64_t>(subgraph_vertices_.size()));
  }
}

std::span<const vertex_t> epoch_plan::seeds(std::int64_t minibatch) const {
  BULKGNN_ASSERT(minibatch >= 0 && minibatch < num_minibatches());
  return std::span<const vertex_t>(order_).subspan(
      static_cast<std::size_t>(offsets_[minibatch]),
      static_cast<std::size_t>(offsets_[minibatch + 1] - offsets_[minibatch]));
}

std::span<const vertex_t> epoch_plan::subgraph(std::int64_t minibatch) const {
  BULKGNN_ASSERT(clustered() && minibatch >= 0 && minibatch < num_minibatches());
  return std::span<const vertex_t>(subgraph_vertices_)
      .subspan(static_cast<std::size_t>(subgraph_offsets_[minibatch]),
               static_cast<std::size_t>(subgraph_offsets_[minibatch + 1] -
                                        subgraph_offsets_[minibatch]));
}

}  // namespace bulkgnn::sampler
