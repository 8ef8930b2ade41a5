#pragma once

#include "bulkgnn/comm/communicator.hpp"
#include "bulkgnn/core/csr.hpp"
#include "bulkgnn/core/executor.hpp"
#include "bulkgnn/core/executor_stage.hpp"
#include "bulkgnn/core/segmented.hpp"
#include "bulkgnn/core/timer.hpp"
#include "bulkgnn/kernels/sample_rows.hpp"
#include "bulkgnn/sampler/epoch_plan.hpp"
#include "bulkgnn/sampler/minibatch.hpp"
#include "bulkgnn/sampler/options.hpp"
#include "bulkgnn/sampler/row_source.hpp"
#include "bulkgnn/sampler/sampler_table.hpp"
#include "bulkgnn/sampler/sampling_algorithm.hpp"

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <utility>
#include <vector>

namespace bulkgnn::sampler {

// The seeds [begin, end) of slice `slice` of `slices` of a minibatch of
// `seeds` seeds: contiguous, in order, sizes differing by at most one.
[[nodiscard]] std::pair<std::int64_t, std::int64_t> slice_range(std::int64_t seeds, int slice,
                                                                int slices);

// The seeds of minibatches [first, first + count) of `plan`, each whole
// (bulk_sample::whole_seeds).
[[nodiscard]] std::vector<std::int64_t> whole_seeds_of(const epoch_plan& plan, std::int64_t first,
                                                       std::int64_t count);

// Which part of each minibatch a data-parallel rank samples: its slice of the
// seeds (slice_range) and what those reach, exactly the part of the whole
// minibatch that restrict_to_seeds cuts.
struct minibatch_split {
  int slice = 0;
  int slices = 1;
  // Layer-wise samplers: the ranks that sample each minibatch together, one
  // per slice (size() == slices, rank() == slice), each computing the
  // sampling distribution over its range of columns. nullptr: this process
  // computes it alone. Node-wise samplers need no one else.
  comm::communicator* ranks = nullptr;
};

// Samples a bulk of consecutive minibatches at once with the sampler that
// options.kind names (sampler_table.hpp): per hop, one sampling pass
// (node-wise) or one SpGEMM plus one sampling pass (layer-wise) serves them
// all. The result depends only on (seed, epoch, minibatch index), never on
// the bulk size or thread count.
//
// The rows of A come from a row_source: the whole graph in memory, or a graph
// sharded over ranks whose rows are fetched per hop (distributed/). Either
// way the same entries are drawn, since draws are keyed by vertex id and
// fetched rows keep A's stored order.
//
// With a cuda executor the graph must be in device or pinned host memory,
// and the bulk comes back on the device (vertices and blocks in device
// memory, segment offsets in pinned host memory); copy_to_host gives a host
// copy to extract or digest.
class bulk_sampler {
 public:
  bulk_sampler(csr_view graph, sampler_options options, executor exec = {});
  // `rows` must outlive the sampler.
  bulk_sampler(row_source& rows, sampler_options options, executor exec = {});

  // The minibatches [first_minibatch, first_minibatch + count) of `plan`.
  [[nodiscard]] bulk_sample sample(const epoch_plan& plan, std::int64_t first_minibatch,
                                   std::int64_t count);
  // Segment j of `seeds` sampled as (part of) minibatch minibatch_ids[j] of
  // `epoch`. Node-wise draws are keyed per (minibatch, vertex), so sampling a
  // subset of a minibatch's seeds gives exactly the part of the whole
  // minibatch's sample that those seeds reach (data-parallel ranks rely on
  // this); layer-wise draws depend on the whole frontier.
  [[nodiscard]] bulk_sample sample(std::uint32_t epoch, segmented_vertices seeds,
                                   std::span<const std::int64_t> minibatch_ids);
  // The same with each minibatch's `excluded` edges left out of its blocks
  // (segment j's for minibatch j), before the next hop grows from them, as
  // DGL's exclude= leaves them out of a sampled frontier. option_error for a
  // sampler that cannot (sampling_algorithm::leaves_out_edges).
  [[nodiscard]] bulk_sample sample(std::uint32_t epoch, segmented_vertices seeds,
                                   std::span<const std::int64_t> minibatch_ids,
                                   const kernels::excluded_edges& excluded);

  // This rank's part of the minibatches [first_minibatch, first_minibatch +
  // count) of `plan` (split.slice of split.slices; whole minibatches for one
  // slice). The parts of every slice together are the whole minibatches:
  // minibatch j's part equals restrict_to_seeds(whole j, slice_range(...)),
  // bit for bit, for any number of slices. With split.ranks, layer-wise
  // sampling is collective: every rank calls with the same minibatches and
  // each computes the sampling distribution of its 1/P of the columns, draws
  // its candidates, and extracts only the block rows its part needs.
  [[nodiscard]] bulk_sample sample_slices(const epoch_plan& plan, std::int64_t first_minibatch,
                                          std::int64_t count, const minibatch_split& split);

  [[nodiscard]] const sampler_options& options() const { return context_->options; }
  // Whether its sampler can leave edges out of a minibatch's blocks (the
  // overload of sample() with excluded edges).
  [[nodiscard]] bool leaves_out_edges() const { return algorithm_->leaves_out_edges(); }
  // Whether a slice of a minibatch's seeds samples the whole minibatch's
  // blocks cut to it (sampling_algorithm::destinations_draw_alone).
  [[nodiscard]] bool destinations_draw_alone() const {
    return algorithm_->destinations_draw_alone();
  }
  // Wall time spent per stage over every call so far.
  [[nodiscard]] const stage_times& times() const { return context_->times; }
  // On a cuda executor, each stage's time on the device (CUDA events),
  // summed over every bulk so far; waits for the stream. Empty otherwise.
  [[nodiscard]] const stage_times& device_times();

 private:
  // A clustered plan's subgraphs of minibatches [first, first + count) in
  // the context while a call samples them.
  class plan_subgraphs {
   public:
    plan_subgraphs(sampling_context& context, const epoch_plan& plan, std::int64_t first,
                   std::int64_t count);
    ~plan_subgraphs();
    plan_subgraphs(const plan_subgraphs&) = delete;
    plan_subgraphs& operator=(const plan_subgraphs&) = delete;

   private:
    sampling_context& context_;
    segmented_vertices subgraphs_;
  };

  void initialise();

  std::unique_ptr<local_rows> own_rows_;  // set when constructed from a graph
  // On the heap: the algorithm keeps a reference to it, and the sampler may move.
  std::unique_ptr<sampling_context> context_;
  std::unique_ptr<sampling_algorithm> algorithm_;
  stage_times device_times_;
};

}  // namespace bulkgnn::sampler
