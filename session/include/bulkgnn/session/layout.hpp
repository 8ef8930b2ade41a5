#pragma once

#include "bulkgnn/core/executor.hpp"
#include "bulkgnn/trainer/training_data.hpp"
#include "bulkgnn/trainer/training_run.hpp"

#include <cstdint>

// Where a run keeps its data, how its stages hand minibatches to the model
// and how it evaluates: decided once, here, from the run's executors, its
// ranks and its GPU's memory. The loaders the session assembles, the trainer
// and `train`'s report follow the decision; none of them makes it again.
namespace bulkgnn::session {

// The share of a GPU's memory that an array its kernels read at random may
// take on the device before it stays in pinned host memory instead, read
// through UVA: the graph half, the feature table a quarter.
inline constexpr double graph_share_of_gpu = 0.5;
inline constexpr double feature_share_of_gpu = 0.25;

// Where a cuda executor keeps `bytes` its kernels read at random: device
// memory when they take at most `share` of its GPU's memory, else pinned
// host memory. option_error for a host executor.
[[nodiscard]] memory_space gpu_space_for(const executor& exec, double bytes, double share);

// Vertices per piece of a GPU's full-graph evaluation when the graph or the
// features do not fit: a piece's block and rows stay far below a GPU's memory
// on OGB-sized graphs (products: about 3M entries, under 1 GiB of rows).
inline constexpr std::int64_t default_eval_piece_rows = std::int64_t{1} << 16;

struct training_layout {
  // Sampling and gathering on a GPU (train_options::exec a cuda executor):
  // the graph and the (normalised) features are copied there once, each to
  // device memory when it fits its share, else to pinned host memory.
  bool sample_on_gpu = false;
  memory_space graph = memory_space::host;
  memory_space features = memory_space::host;
  // A model on a GPU fed by host stages: each minibatch is copied by a
  // host_to_device stage on a stream of its own, so that the copies overlap
  // the train step.
  bool host_to_device = false;
  // Remote feature rows move GPU to GPU (feature_fetcher::place_on_device):
  // the ranks sum gradients on their GPUs (every rank owns one; NCCL), the
  // model trains there, the host samples, and the features are partitioned.
  // Else they cross through host memory and the host_to_device stage copies
  // them.
  bool features_between_gpus = false;
  // Full-graph evaluation reads the sampler's device copies of the graph and
  // the features instead of copies of its own: the model is on the sampler's
  // GPU and both copies are in its device memory.
  bool evaluation_reads_sampler_copies = false;
  // How full-graph evaluation goes: by shares for several data-parallel
  // ranks on the host; on a GPU whole when the graph and the features fit
  // in its memory, else in pieces of default_eval_piece_rows vertices
  // (train_options::eval_piece_rows > 0 asks for pieces of that many).
  trainer::evaluation_plan evaluation;
};

// The layout of a training run of `options` over `ds`. option_error naming
// train_options.exec for sampling on a GPU under several ranks or over a
// part of a partitioned dataset.
[[nodiscard]] training_layout layout_for(const trainer::training_data& ds,
                                         const trainer::train_options& options);

}  // namespace bulkgnn::session
