#pragma once

#include "bulkgnn/core/csr.hpp"
#include "bulkgnn/core/executor.hpp"
#include "bulkgnn/core/hash.hpp"
#include "bulkgnn/core/segmented.hpp"

#include <cstdint>
#include <span>
#include <vector>

namespace bulkgnn::sampler {

// One hop of a bulk: for each minibatch j, its sources (destinations first)
// and its block rows, back to back.
struct sampled_layer {
  // Segment j: minibatch j's destination vertices at this hop, then the
  // other source vertices (global ids).
  segmented_vertices sources;
  // One row per destination (segments in minibatch order); columns are local
  // positions in the minibatch's sources; values are edge weights where the
  // sampler defines them (layer-wise), else empty.
  csr_matrix blocks;
  // First block row of each minibatch (the destination offsets).
  buffer<std::int64_t> row_offsets{0};
};

// A self-contained sampled minibatch in the PyG/DGL layout.
struct minibatch {
  std::int64_t index = 0;  // position in the epoch
  buffer<vertex_t> seeds;  // global ids
  // Seeds of the whole minibatch, every data-parallel slice's together: the
  // share of the minibatch's loss that `seeds` carry is their count over
  // this (0 where it was not sampled from an epoch plan).
  std::int64_t whole_seeds = 0;
  buffer<std::int32_t> labels;   // labels of the seeds (empty if none given)
  buffer<vertex_t> input_nodes;  // global ids of the outermost sources
  // DGL order: blocks[0] is the input-most layer. Block b has one row per
  // destination and one column per source, local ids, and its destinations
  // are the first rows() sources; blocks.back() has the seeds as rows.
  std::vector<csr_matrix> blocks;

  // What its buffers hold (the pipeline bounds its queues by it).
  [[nodiscard]] std::size_t size_bytes() const;
};

// One destination's edges at one hop of a minibatch, as it adds to the
// minibatch's digest: the parts of a minibatch that data-parallel ranks
// sample share destinations, each with all its edges, so the whole
// minibatch's digest counts each destination once (merge_digest).
struct destination_edges {
  std::int64_t minibatch = 0;  // epoch position
  std::int64_t hop = 0;
  vertex_t destination = 0;
  std::uint64_t count = 0;  // its edges
  std::uint64_t sum = 0;    // multiset_hasher sum of its (dst, src) edges
};

// Minibatches of one epoch sampled together (or, on data-parallel ranks, this
// rank's parts of them).
struct bulk_sample {
  buffer<std::int64_t> minibatch_ids;  // epoch position of each segment
  segmented_vertices seeds;
  // Per segment, where sampled from an epoch plan (bulk_sampler): the seeds
  // of the whole minibatch that the segment is (a slice of); empty otherwise.
  std::vector<std::int64_t> whole_seeds;
  std::vector<sampled_layer> layers;  // layers[h] is hop h from the seeds

  [[nodiscard]] std::int64_t count() const { return seeds.segments(); }
  // Copies minibatch j (0 <= j < count()) out of the bulk; labels, if given,
  // are indexed by global vertex id.
  [[nodiscard]] minibatch extract(std::int64_t j, std::span<const std::int32_t> labels = {}) const;
  // The same on `exec` for a bulk in any memory: a bulk sampled on a GPU
  // gives a minibatch in device memory, extracted there (only the seeds' few
  // labels are looked up on the host, from host `labels`).
  [[nodiscard]] minibatch extract(std::int64_t j, std::span<const std::int32_t> labels,
                                  const executor& exec) const;
  // Stable hash of minibatch j's canonical content: its seeds in order, then
  // per hop the multiset of its edges as global (dst, src) pairs, so the
  // digest does not depend on local numbering or storage order.
  [[nodiscard]] std::uint64_t digest(std::int64_t j) const;
  [[nodiscard]] edge_t sampled_edges() const;
  // What its buffers hold (the pipeline bounds its queues by it).
  [[nodiscard]] std::size_t size_bytes() const;
  // Every destination of every hop of minibatch j, hop by hop.
  [[nodiscard]] std::vector<destination_edges> destinations(std::int64_t j) const;
};

// A host copy of a bulk sampled on any executor (a cuda bulk lives on the
// device), for extracting or digesting its minibatches.
[[nodiscard]] bulk_sample copy_to_host(const bulk_sample& bulk);

// A host copy of a minibatch in any memory (one a GPU loader handed out).
[[nodiscard]] minibatch copy_to_host(const minibatch& mb);

// The digest of a whole minibatch (bulk_sample::digest) from its seeds, in
// order, and the destinations of all its parts, in any order: a destination
// that several parts hold counts once. Throws if two parts give one
// destination different edges.
[[nodiscard]] std::uint64_t merge_digest(std::span<const vertex_t> seeds, std::int64_t hops,
                                         std::vector<destination_edges> destinations);

// The digest of a minibatch extracted from a bulk: equal to the bulk's
// digest(j) for the minibatch it came from, so consumers of extracted
// minibatches (the loader, other ranks) can be checked against the sampler.
[[nodiscard]] std::uint64_t digest(const minibatch& mb);

// The part of `mb` that its seeds [begin, end) reach: their rows of the last
// block, the rows of the sources those use in the block below, and so on,
// renumbered with destinations first (the same layout). Every kept row is
// whole, so training on the part computes exactly what the whole minibatch
// computes for those seeds. Data-parallel ranks use it to split a minibatch
// whose sample depends on all its seeds (layer-wise samplers).
[[nodiscard]] minibatch restrict_to_seeds(const minibatch& mb, std::int64_t begin,
                                          std::int64_t end);
// The same for the seeds at `positions` (distinct), which become the part's
// seeds in that order (a link minibatch's slice: the endpoints of its pairs).
[[nodiscard]] minibatch restrict_to_seeds(const minibatch& mb, std::span<const vertex_t> positions);
// The same over `blocks` (in mb.blocks' order) in place of mb.blocks, which
// it does not read: a subgraph sampler's layers all view one induced
// subgraph, which need not be copied per layer first.
[[nodiscard]] minibatch restrict_to_seeds(const minibatch& mb, std::span<const csr_view> blocks,
                                          std::span<const vertex_t> positions);

// Folds per-minibatch digests, in minibatch order, into one run digest.
class run_digest {
 public:
  void add(std::uint64_t minibatch_digest);
  [[nodiscard]] std::uint64_t value() const;

 private:
  digest_hasher hasher_;
};

}  // namespace bulkgnn::sampler
