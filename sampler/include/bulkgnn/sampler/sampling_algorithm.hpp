#pragma once

#include "bulkgnn/comm/communicator.hpp"
#include "bulkgnn/core/executor.hpp"
#include "bulkgnn/core/executor_stage.hpp"
#include "bulkgnn/core/segmented.hpp"
#include "bulkgnn/core/timer.hpp"
#include "bulkgnn/kernels/exclude_edges.hpp"
#include "bulkgnn/sampler/minibatch.hpp"
#include "bulkgnn/sampler/options.hpp"
#include "bulkgnn/sampler/row_source.hpp"
#include "bulkgnn/sampler/subgraph_batches.hpp"

#include <cstdint>
#include <span>

namespace bulkgnn::sampler {

// What every sampling algorithm draws on, owned by the bulk_sampler that
// runs it: where rows of A come from, the options, the executor, and the
// clocks each stage adds its time to.
struct sampling_context {
  row_source& rows;
  sampler_options options;
  executor exec;
  stage_times times = {};
  device_stage_log device_log = {};
  // The edges each minibatch of the bulk being sampled leaves out of its
  // blocks (a link minibatch's supervision edges); null: none. Set by
  // bulk_sampler for one call.
  const kernels::excluded_edges* excluded = nullptr;
  // Where the epoch plan's minibatches are subgraphs (Cluster-GCN,
  // GraphSAINT): segment j holds every vertex minibatch j of the bulk runs
  // on (epoch_plan::subgraph), and `batching` is what cut them; null
  // otherwise. Set by bulk_sampler for one call.
  const segmented_vertices* subgraphs = nullptr;
  const subgraph_batches* batching = nullptr;
};

// One sampler of the table (sampler_table.hpp): how a bulk of minibatches
// is drawn, hop after hop. The bulk_sampler checks the options, seeds and
// minibatch ids before it calls, and hands over host-built seeds; where the
// executor's kernels read them is the algorithm's business (on_executor).
class sampling_algorithm {
 public:
  explicit sampling_algorithm(sampling_context& context) : context_(context) {}
  virtual ~sampling_algorithm() = default;
  sampling_algorithm(const sampling_algorithm&) = delete;
  sampling_algorithm& operator=(const sampling_algorithm&) = delete;

  // Segment j of `seeds` sampled as minibatch minibatch_ids[j] of `epoch`.
  [[nodiscard]] virtual bulk_sample sample(std::uint32_t epoch, segmented_vertices seeds,
                                           std::span<const std::int64_t> minibatch_ids) = 0;
  // The part of each minibatch that `part` (a sub-list of `whole`'s seeds per
  // segment) reaches, equal bit for bit to restrict_to_seeds of the whole
  // minibatch. Collective over `ranks` (one slice each) where the algorithm
  // needs every rank's share; nullptr: this process computes it alone.
  [[nodiscard]] virtual bulk_sample sample_part(std::uint32_t epoch, segmented_vertices whole,
                                                segmented_vertices part,
                                                std::span<const std::int64_t> minibatch_ids,
                                                comm::communicator* ranks) = 0;
  // Whether it leaves sampling_context::excluded's edges out of the blocks
  // it draws (bulk_sampler refuses exclusions for an algorithm that cannot).
  [[nodiscard]] virtual bool leaves_out_edges() const { return false; }
  // Whether each destination's draw depends on it alone (its minibatch's
  // other destinations aside), so that sampling a slice of a minibatch's
  // destinations gives the whole minibatch's blocks cut to them.
  [[nodiscard]] virtual bool destinations_draw_alone() const { return false; }

 protected:
  [[nodiscard]] sampling_context& context() const { return context_; }

 private:
  sampling_context& context_;
};

// A sampler whose every destination draws its own neighbours, keyed by
// (minibatch, vertex): a hop is one call per bulk. Where a destination's
// draw depends on no other (node-wise, random walks, LABOR-0), a slice of a
// minibatch's seeds samples exactly its part with no one else; where it does
// (LABOR-i's importances span the minibatch's frontier), the part is cut
// from the whole minibatch.
class per_destination_sampling : public sampling_algorithm {
 public:
  using sampling_algorithm::sampling_algorithm;

  [[nodiscard]] bulk_sample sample(std::uint32_t epoch, segmented_vertices seeds,
                                   std::span<const std::int64_t> minibatch_ids) final;
  [[nodiscard]] bulk_sample sample_part(std::uint32_t epoch, segmented_vertices whole,
                                        segmented_vertices part,
                                        std::span<const std::int64_t> minibatch_ids,
                                        comm::communicator* ranks) final;
  // Each hop's draws are the edges themselves, so dropping a minibatch's
  // excluded ones leaves none of them in reach (random walks, whose draws are
  // paths, also drop them before every step).
  [[nodiscard]] bool leaves_out_edges() const override { return true; }
  [[nodiscard]] bool destinations_draw_alone() const override {
    return !destinations_share_draws();
  }

 protected:
  // Whether a destination's draw depends on its minibatch's other
  // destinations.
  [[nodiscard]] virtual bool destinations_share_draws() const { return false; }
  // Hop `hop` from `frontier` (on the executor): its sources and blocks.
  [[nodiscard]] virtual sampled_layer sample_hop(const segmented_vertices& frontier,
                                                 std::span<const std::int64_t> minibatch_ids,
                                                 std::uint32_t epoch, std::uint32_t hop) = 0;
  // The minibatch of each frontier row, where the executor reads it: with
  // the row's vertex, what keys its random stream.
  [[nodiscard]] buffer<std::uint32_t> minibatch_of_rows(
      const segmented_vertices& frontier, std::span<const std::int64_t> minibatch_ids) const;
  // The hop whose row i (of `drawn`) holds the global ids frontier row i
  // drew, relabelled per minibatch less its excluded edges
  // (detail::relabel_leaving_out_excluded).
  [[nodiscard]] sampled_layer relabelled_hop(const segmented_vertices& frontier,
                                             csr_view drawn) const;
};

// Host-built inputs of a hop (seeds, minibatch ids) where the executor's
// kernels read them: unchanged on the host back ends; on cuda, vertices in
// device memory and segment offsets in pinned host memory (the device reads
// them through UVA, the host keeps reading them).
[[nodiscard]] segmented_vertices on_executor(const executor& exec, segmented_vertices vertices);
[[nodiscard]] buffer<std::uint32_t> on_executor(const executor& exec,
                                                std::span<const std::uint32_t> values);
[[nodiscard]] buffer<vertex_t> on_executor(const executor& exec, std::span<const vertex_t> values);

}  // namespace bulkgnn::sampler
