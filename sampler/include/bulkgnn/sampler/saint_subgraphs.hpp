#pragma once

#include "bulkgnn/core/csr.hpp"
#include "bulkgnn/core/executor.hpp"
#include "bulkgnn/core/rng.hpp"
#include "bulkgnn/core/segmented.hpp"
#include "bulkgnn/sampler/options.hpp"
#include "bulkgnn/sampler/subgraph_batches.hpp"

#include <cstdint>
#include <filesystem>
#include <memory>
#include <span>
#include <vector>

namespace bulkgnn::sampler {

// How a GraphSAINT sampler draws a subgraph's vertices (as PyG's
// GraphSAINT{Node,Edge,RandomWalk}Sampler do).
enum class saint_draw {
  node,         // `budget` vertices with replacement, each with probability ∝ its degree
  edge,         // `budget` edges with replacement, edge (v, u) ∝ 1/deg(v) + 1/deg(u); their ends
  random_walk,  // `budget` uniform roots and every vertex of a walk of walk_length from each
};

struct saint_settings {
  saint_draw draw = saint_draw::node;
  std::int64_t budget = 0;  // vertices, edges or walk roots per subgraph
  std::int64_t walk_length = 2;
  // Subgraphs per epoch; 0: enough draws to touch the graph's vertices
  // about once (⌈N / (budget · vertices per draw)⌉).
  std::int64_t steps = 0;
  // The normalisation is estimated from subgraphs drawn until they hold
  // coverage · N vertices together (PyG's sample_coverage).
  std::int64_t coverage = 100;
  std::uint32_t seed = 0;
  // Where the presampled counts are kept and found again, in a file named
  // after the graph and the settings above (sampler_options::cache_dir);
  // empty: nowhere.
  std::filesystem::path cache_dir = {};
};

// GraphSAINT's minibatches (Zeng et al., "GraphSAINT: Graph Sampling Based
// Inductive Learning Method", ICLR 2020): each is the subgraph induced on
// vertices drawn afresh (draw()), its seeds the training vertices among
// them, every layer on the whole subgraph. What makes the estimates
// unbiased are the normalisation coefficients, estimated as the paper does
// from M subgraphs drawn ahead (streams apart from every epoch's): with C_v
// the presampled subgraphs holding v and C_vu those holding both ends of
// edge (v ← u),
// - an edge's aggregation weight is Ã_vu · C_v / C_vu (Ã_vu = 1/deg(v), the
//   mean), so that given v, its aggregation over the subgraph is unbiased
//   for its aggregation over the graph (the paper's α_uv = p_uv / p_v; PyG's
//   example takes the count of the edge's other end instead);
// - a seed's loss weight is M / (C_v · N), so that a subgraph's summed loss
//   estimates the mean loss over the graph's training vertices times their
//   share of the graph.
// As PyG, a ratio with a zero count becomes 0.1 (0 / 0) or is capped at
// 10^4. Every draw is a function of (seed, epoch, minibatch) alone.
class saint_subgraphs final : public subgraph_batches {
 public:
  // Presamples on `exec`'s threads, and draws every epoch's subgraphs there.
  saint_subgraphs(csr_view graph, const saint_settings& settings, executor exec = {});

  [[nodiscard]] std::int64_t num_vertices() const override { return graph_.rows; }
  // settings.steps, or its default; batch_size must be the budget.
  [[nodiscard]] std::int64_t minibatch_count(std::span<const vertex_t> train,
                                             std::int64_t batch_size) const override;
  [[nodiscard]] batched_subgraphs batch(std::span<const vertex_t> train, std::int64_t batch_size,
                                        std::uint32_t seed, std::uint32_t epoch) const override;
  [[nodiscard]] std::span<const float> loss_weights() const override { return loss_weights_; }

  // The vertices of subgraph `index` of `epoch`, ascending, each once.
  [[nodiscard]] std::vector<vertex_t> draw(std::uint32_t epoch, std::int64_t index) const;
  // The same for presampled subgraph `index` (streams apart from every
  // epoch's).
  [[nodiscard]] std::vector<vertex_t> draw_presampled(std::int64_t index) const;
  // The aggregation weight of edge (v ← u); the edge must be in the graph.
  [[nodiscard]] float edge_weight(vertex_t v, vertex_t u) const;
  // A[V_j, V_j] for each segment V_j of `vertices` (distinct vertices each):
  // one row per vertex in V_j's order, local column ids ascending (repeated
  // edges kept), each edge's aggregation weight as its value.
  [[nodiscard]] csr_matrix induced_subgraphs(const segmented_vertices& vertices) const;
  // M, and C_v and C_vu of the presampled subgraphs.
  [[nodiscard]] std::int64_t presampled() const { return presampled_; }
  [[nodiscard]] std::int64_t vertex_count(vertex_t v) const { return vertex_counts_[v]; }
  [[nodiscard]] std::int64_t edge_count(vertex_t v, vertex_t u) const;

 private:
  saint_settings settings_;
  executor exec_;
  // The graph with each row's columns ascending (so that an edge is found by
  // bisection), and its edges' aggregation weights in the same order.
  csr_matrix graph_;
  std::vector<double> edge_cumulative_;  // edge draws: cumulative probabilities
  std::vector<std::int64_t> vertex_counts_;
  std::vector<std::uint32_t> edge_counts_;  // at most M < 2^32
  std::vector<float> edge_weights_;
  std::vector<float> loss_weights_;
  std::int64_t presampled_ = 0;

  [[nodiscard]] edge_t find_edge(vertex_t v, vertex_t u) const;
  [[nodiscard]] std::vector<vertex_t> draw_from(const rng_key& key) const;
  // Presamples, or reads the counts that settings_.cache_dir keeps for this
  // graph and these settings (and keeps what it presampled there).
  void presample_or_read_kept();
  // The kept counts, if a whole and consistent set is there.
  [[nodiscard]] bool read_kept(const std::filesystem::path& file, std::uint64_t key);
  void presample();
  void normalise();
};

// The saint_settings of a saint-* sampler of `options` with `budget`
// (loader_options::batch_size).
[[nodiscard]] saint_settings saint_settings_of(const sampler_options& options, std::int64_t budget);

// Where settings.cache_dir keeps the presampled counts of `graph` (any row
// order) for `settings`.
[[nodiscard]] std::filesystem::path kept_saint_counts_file(csr_view graph,
                                                           const saint_settings& settings);

// A saint-* sampler's batching of `graph` (held whole on the host).
[[nodiscard]] std::shared_ptr<const subgraph_batches> saint_batching(csr_view graph,
                                                                     const sampler_options& options,
                                                                     std::int64_t batch_size,
                                                                     const executor& exec);

}  // namespace bulkgnn::sampler
