#pragma once

#include "bulkgnn/core/types.hpp"
#include "bulkgnn/data/dataset.hpp"
#include "bulkgnn/loader/loader.hpp"
#include "bulkgnn/sampler/bulk_sampler.hpp"
#include "bulkgnn/session/execution.hpp"

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <unordered_map>
#include <vector>

// Minibatches for a consumer outside the trainer (the Python NeighborLoader):
// the bulk sampler and the multistage pipeline over a dataset, assembled here
// as for the bulkgnn command, so that a front end only fills in the plan.
namespace bulkgnn::session {

// What to load and where. Errors name these fields (sampler_options.*,
// loader_options.*, execution_options.*).
struct loading_plan {
  sampler::sampler_options sampling;
  loader::loader_options loading;
  // device: where the minibatches are made and handed out: the host back
  // ends, or cuda (this process's GPU samples and gathers, the minibatches
  // live in its memory; the graph and features are copied there, to device
  // memory when they take at most a half and a quarter of it, else pinned).
  execution_options execution;
  // false: each epoch takes the seeds in the caller's order, with the same
  // draws a shuffled epoch would make for the same minibatches.
  bool shuffle = true;
};

// Where the seeds of one epoch's minibatches sit in the seeds a loading was
// given (PyG's input_id): minibatch mb holds seeds[at(mb)[k]] as its k-th
// seed, this rank's slice of them where the loader slices minibatches.
class seed_positions {
 public:
  using vertex_positions = std::unordered_map<vertex_t, vertex_t>;

  // For samplers that batch the seeds: the epoch's order, from its shuffle.
  seed_positions(std::int64_t seeds, std::int64_t batch_size, std::uint32_t sampler_seed,
                 std::uint32_t epoch, bool shuffle, int slice, int slices);
  // For subgraph samplers, whose seeds are the given ones among the vertices
  // they cluster or draw: each seed's position (its first, where listed
  // twice) by vertex, the same in every epoch (no epoch's subgraphs drawn
  // twice to find them).
  explicit seed_positions(std::shared_ptr<const vertex_positions> position_of);

  [[nodiscard]] std::vector<std::int64_t> at(const sampler::minibatch& batch) const;

 private:
  std::vector<vertex_t> order_;        // the epoch's order of positions
  std::vector<std::int64_t> offsets_;  // where each minibatch starts in it
  int slice_ = 0;
  int slices_ = 1;
  std::shared_ptr<const vertex_positions> position_of_;  // subgraph samplers'
};

class minibatch_loading {
 public:
  // option_error naming the field for a plan that cannot run (a sampler's
  // options, one with no GPU kernel on device cuda, cuda without a GPU).
  // Reads the whole graph where a sampler's setup does (FastGCN's column
  // weights).
  minibatch_loading(std::shared_ptr<const data::dataset> dataset, std::vector<vertex_t> seeds,
                    const loading_plan& plan);

  // Starts `epoch`; at most one epoch runs at a time (the loader's rule).
  [[nodiscard]] loader::epoch_stream epoch(std::uint32_t epoch);

  // As loader_options.max_minibatches limits them.
  [[nodiscard]] std::int64_t minibatches_per_epoch() const;
  [[nodiscard]] const std::shared_ptr<const data::dataset>& dataset() const { return dataset_; }
  // Where the minibatches are made (and, for cuda, live).
  [[nodiscard]] const executor& exec() const { return exec_; }
  // Where epoch `epoch`'s minibatch seeds sit in the seeds given.
  [[nodiscard]] seed_positions positions(std::uint32_t epoch) const;
  // Each vertex's loss weight as a seed (GraphSAINT's normalisation), by
  // vertex id; empty where a minibatch's loss is the mean over its seeds.
  [[nodiscard]] std::span<const float> seed_loss_weights() const {
    return subgraphs_ ? subgraphs_->loss_weights() : std::span<const float>{};
  }

 private:
  // The graph and features where a GPU's kernels read them.
  struct gpu_copies {
    gpu_copies(const data::dataset& ds, const executor& exec);
    csr_matrix graph;
    buffer<float> features;
  };
  [[nodiscard]] loader::graph_source source() const;

  std::shared_ptr<const data::dataset> dataset_;
  std::vector<vertex_t> seeds_;
  bool shuffle_;
  executor exec_;
  std::optional<gpu_copies> gpu_;  // device cuda only
  sampler::bulk_sampler sampler_;
  // How the sampler cuts epochs into subgraphs (null for samplers that
  // batch seeds).
  std::shared_ptr<const sampler::subgraph_batches> subgraphs_;
  // Each seed's position by vertex (subgraph samplers only).
  std::shared_ptr<const seed_positions::vertex_positions> subgraph_seed_positions_;
  loader::minibatch_loader loader_;  // after the sampler and subgraphs it uses
};

// Link minibatches for a consumer outside the trainer (the Python
// LinkNeighborLoader): positive edges with negatives, blocks grown from
// their endpoints without the minibatch's own edges, and their features.
struct link_plan {
  loading_plan nodes;  // nodes.shuffle shuffles the positives each epoch
  sampler::negative_sampling negatives;
  sampler::edge_exclusion exclude = sampler::edge_exclusion::reverse;
};

class link_loading {
 public:
  // Positive i is source[i] -> target[i] with label[i] (empty: 1).
  // option_error naming the field for
  // a plan that cannot run (refusals as minibatch_loading's, and a sampler
  // that cannot leave edges out).
  link_loading(std::shared_ptr<const data::dataset> dataset, std::vector<vertex_t> source,
               std::vector<vertex_t> target, std::vector<float> label, const link_plan& plan);

  [[nodiscard]] loader::epoch_stream epoch(std::uint32_t epoch);
  [[nodiscard]] std::int64_t minibatches_per_epoch() const;
  [[nodiscard]] const std::shared_ptr<const data::dataset>& dataset() const { return dataset_; }
  [[nodiscard]] const executor& exec() const { return exec_; }

 private:
  std::shared_ptr<const data::dataset> dataset_;
  std::vector<vertex_t> source_;
  std::vector<vertex_t> target_;
  std::vector<float> label_;
  executor exec_;
  sampler::bulk_sampler sampler_;
  loader::minibatch_loader loader_;  // after the sampler and edges it uses
};

}  // namespace bulkgnn::session
