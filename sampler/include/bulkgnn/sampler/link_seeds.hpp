#pragma once

#include "bulkgnn/core/csr.hpp"
#include "bulkgnn/core/types.hpp"
#include "bulkgnn/kernels/exclude_edges.hpp"
#include "bulkgnn/sampler/bulk_sampler.hpp"
#include "bulkgnn/sampler/minibatch.hpp"

#include <cstdint>
#include <span>
#include <string>
#include <vector>

// Link prediction's minibatches: positive edges of a split with negatives
// drawn beside them, whose endpoints are the seeds that any node-wise
// sampler grows blocks from. Every draw is keyed on (seed, epoch,
// minibatch, pair), so the same seed gives the same minibatches for any
// thread count and bulk size.
namespace bulkgnn::sampler {

// How negatives are drawn, as PyG's NegativeSampling.
enum class negative_mode {
  // ⌈amount · P⌉ pairs (s, t) for P positives (none for amount 0), s and t
  // drawn independently, labelled 0 after the positives' 1
  // (edge_label_index, edge_label).
  binary,
  // `amount` (a whole number) tails t for each positive (s, ·): the positive's
  // source with corrupted targets (OGB citation2's protocol).
  triplet,
};

// Which vertices a negative endpoint is drawn from.
enum class negative_distribution {
  uniform,  // every vertex alike
  degree,   // in proportion to in-degree^0.75 (word2vec's unigram^0.75)
};

struct negative_sampling {
  negative_mode mode = negative_mode::binary;
  double amount = 1;
  negative_distribution distribution = negative_distribution::uniform;
  // Redraw a pair that is an edge of the graph or a loop, so that no
  // negative is a known positive (at most strict_attempts draws each).
  bool strict = false;
};

inline constexpr int strict_attempts = 1000;

// Which edges a minibatch leaves out of its sampled blocks (DGL's exclude=).
enum class edge_exclusion {
  none,     // none: the model may read the edge it predicts
  self,     // each positive s → t itself
  reverse,  // s → t and t → s (an undirected graph stores both)
};

struct link_options {
  std::int64_t batch_size = 1024;  // positives per minibatch
  std::uint32_t seed = 0;
  negative_sampling negatives;
  edge_exclusion exclude = edge_exclusion::reverse;
  // false: the positives in the caller's order every epoch (negatives still
  // drawn per epoch).
  bool shuffle = true;
};

[[nodiscard]] negative_mode parse_negative_mode(const std::string& name);
[[nodiscard]] negative_distribution parse_negative_distribution(const std::string& name);
[[nodiscard]] edge_exclusion parse_edge_exclusion(const std::string& name);
[[nodiscard]] std::string_view edge_exclusion_name(edge_exclusion e);

// option_error naming the link_options field that is impossible.
void validate(const link_options& options);

// The positive edges of a split: edge i is source[i] → target[i], with
// label[i] (empty: every positive is labelled 1).
struct edge_list {
  std::span<const vertex_t> source;
  std::span<const vertex_t> target;
  std::span<const float> label = {};
};

// option_error for positives that are no edges of a graph of `num_vertices`
// (sizes that differ, ids out of range, labels that are not finite, none).
void validate(edge_list positives, std::int64_t num_vertices);

// One minibatch's supervision, laid out as PyG's LinkNeighborLoader batch.
struct link_seeds {
  std::int64_t index = 0;  // position in the epoch
  // Every endpoint, sorted and distinct: the node sampler's seeds, so that
  // the local id of a vertex is its position here.
  std::vector<vertex_t> nodes;
  // The positives' positions in the split (PyG's input_id).
  std::vector<std::int64_t> input_id;
  // Local ids. binary: the positives, then the negatives (edge_label_index);
  // triplet: the positives only (src_index, dst_pos_index).
  std::vector<vertex_t> label_source;
  std::vector<vertex_t> label_target;
  // binary: the positives' labels (as given; where negatives are drawn and
  // the given labels start at 0, each plus 1, as PyG, so that 0 is the
  // negatives' label), then 0 for the negatives.
  std::vector<float> edge_label;
  // triplet: negative_target[i · amount + k] is positive i's k-th corrupted
  // tail (dst_neg_index); empty for binary.
  std::vector<vertex_t> negative_target;
  // The scored pairs of the whole minibatch (pairs() where this is whole, more
  // where it is a data-parallel rank's slice): a slice's loss is weighted by
  // its share of them.
  std::int64_t minibatch_pairs = 0;

  // What its arrays hold (the pipeline bounds its queues by it).
  [[nodiscard]] std::size_t size_bytes() const;
  [[nodiscard]] std::int64_t positives() const {
    return static_cast<std::int64_t>(input_id.size());
  }
  // The pairs a model scores: binary, every label_source entry; triplet, the
  // positives and their corrupted tails.
  [[nodiscard]] std::int64_t pairs() const {
    return static_cast<std::int64_t>(label_source.size() + negative_target.size());
  }
  // The global ids of a local column.
  [[nodiscard]] vertex_t global(vertex_t local) const {
    return nodes[static_cast<std::size_t>(local)];
  }
};

// Draws negative endpoints over a graph's vertices; holds the degree table
// once for every epoch.
class negative_sampler {
 public:
  // `graph` (the in-neighbour CSR, sorted rows) must outlive the sampler.
  negative_sampler(csr_view graph, const negative_sampling& options);

  // A pair (source, target) from the stream of `key`; `fixed_source` >= 0
  // keeps that source (triplet). Strict: redrawn from the same stream until
  // it is neither a loop nor an edge of the graph; option_error after
  // strict_attempts draws.
  [[nodiscard]] std::pair<vertex_t, vertex_t> draw(const rng_key& key,
                                                   vertex_t fixed_source = -1) const;
  [[nodiscard]] bool is_edge(vertex_t source, vertex_t target) const;
  [[nodiscard]] std::int64_t num_vertices() const { return graph_.rows; }

 private:
  [[nodiscard]] vertex_t endpoint(philox_stream& rng) const;

  csr_view graph_;
  negative_sampling options_;
  std::vector<double> cumulative_;  // degree: running sums of in-degree^0.75
};

// The link minibatches of one epoch: the positives in an order shuffled by
// (seed, epoch) alone (or as given), cut into minibatches of batch_size,
// each with its negatives.
class link_epoch_plan {
 public:
  // `positives` and `negatives` must outlive the plan.
  link_epoch_plan(edge_list positives, const negative_sampler& negatives,
                  const link_options& options, std::uint32_t epoch);

  [[nodiscard]] std::uint32_t epoch() const { return epoch_; }
  [[nodiscard]] std::int64_t num_minibatches() const;
  [[nodiscard]] link_seeds seeds(std::int64_t minibatch) const;

 private:
  edge_list positives_;
  const negative_sampler& negatives_;
  link_options options_;
  std::uint32_t epoch_;
  float label_shift_ = 0;
  std::vector<std::int64_t> order_;
};

// Part `slice` of `slices` of a minibatch, for a data-parallel rank: its
// positives in slice_range of them, and the negatives in slice_range of the
// negatives (binary) or those positives' corrupted tails (triplet), local
// ids renumbered over the endpoints they hold. The slices of all ranks hold
// every pair of the minibatch once; minibatch_pairs stays the whole's.
[[nodiscard]] link_seeds slice_of(const link_seeds& whole, int slice, int slices);

// The edges a minibatch leaves out of its blocks: its positives (and their
// reverses) as `exclude` says.
[[nodiscard]] std::vector<std::uint64_t> excluded_keys(const link_seeds& seeds,
                                                       edge_exclusion exclude);

// Link minibatches sampled together: their supervision, and the blocks that
// `nodes` grew from their endpoints.
struct link_bulk {
  std::vector<link_seeds> seeds;
  bulk_sample nodes;

  [[nodiscard]] std::int64_t count() const { return static_cast<std::int64_t>(seeds.size()); }
  // The blocks, input nodes and seeds of minibatch j (minibatch::seeds are
  // its link_seeds::nodes).
  [[nodiscard]] minibatch extract(std::int64_t j) const { return nodes.extract(j); }
  // The node minibatch's digest folded with its supervision (global ids,
  // labels, input ids).
  [[nodiscard]] std::uint64_t digest(std::int64_t j) const;
  [[nodiscard]] std::size_t size_bytes() const;
};

// The digest of a link minibatch extracted from a bulk (its node minibatch
// and its supervision): equal to the bulk's digest(j) for the one it came
// from.
[[nodiscard]] std::uint64_t digest(const minibatch& mb, const link_seeds& seeds);

// The minibatches [first, first + count) of `plan`, their blocks drawn by
// `sampler` with each minibatch's excluded edges left out. With slices > 1,
// part `slice` of each (slice_of), whose blocks are the whole minibatch's
// cut to its endpoints (restrict_to_seeds): where each destination draws
// alone (bulk_sampler::destinations_draw_alone), grown from its own
// endpoints, leaving out the whole minibatch's excluded edges; otherwise
// (LADIES, FastGCN, LABOR-i with i >= 1, per-minibatch sampler programs) cut
// from the whole minibatch, which every slice samples (host back ends).
[[nodiscard]] link_bulk sample_links(bulk_sampler& sampler, const link_epoch_plan& plan,
                                     std::int64_t first, std::int64_t count, edge_exclusion exclude,
                                     int slice = 0, int slices = 1);

}  // namespace bulkgnn::sampler
