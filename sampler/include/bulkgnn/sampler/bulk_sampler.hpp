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
#include "bulkgnn/sampler/row_source.hpp"

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <utility>
#include <vector>

namespace bulkgnn::sampler {

enum class sampler_kind {
  node_wise,  // GraphSAGE: fanouts[l] neighbours per frontier vertex at hop l
  ladies,     // LADIES: fanouts[l] vertices per minibatch at hop l, frontier-dependent
  fastgcn,    // FastGCN: fanouts[l] vertices per minibatch from one global distribution
};

[[nodiscard]] sampler_kind parse_sampler_kind(const std::string& name);
[[nodiscard]] std::string sampler_kind_name(sampler_kind kind);

struct sampler_options {
  sampler_kind kind = sampler_kind::node_wise;
  // One entry per hop, hop 0 starting from the seeds (PyG's num_neighbors
  // order). Node-wise: -1 takes every neighbour.
  std::vector<std::int64_t> fanouts;
  // Node-wise only: draw with replacement; draw proportionally to edge weights.
  kernels::replacement replacement = kernels::replacement::without;
  bool weighted = false;
  std::uint32_t seed = 0;
};

// Throws option_error naming the option if `options` is impossible for a
// graph with (or without) edge weights.
void validate(const sampler_options& options, bool graph_weighted);

// The seeds [begin, end) of slice `slice` of `slices` of a minibatch of
// `seeds` seeds: contiguous, in order, sizes differing by at most one.
[[nodiscard]] std::pair<std::int64_t, std::int64_t> slice_range(std::int64_t seeds, int slice,
                                                                int slices);

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

// Samples a bulk of consecutive minibatches at once: per hop, one sampling
// pass (node-wise) or one SpGEMM plus one sampling pass (layer-wise) serves
// them all. The result depends only on (seed, epoch, minibatch index), never
// on the bulk size or thread count.
//
// Layer-wise sampling follows LADIES (Zou et al., 2019) with self loops:
// with Â = D̃⁻¹(A + I) and frontier F_j of minibatch j, column v is drawn with
// probability p_j(v) ∝ Σ_{u∈F_j} Â(u,v)² (computed as Q·(A + I) with
// Q(j,u) = 1/(deg(u)+1)²), fanouts[l] distinct columns per minibatch. The
// sources are F_j followed by the drawn columns; the block keeps the edges of
// A + I between them, weighted Â(u,v)/p_j(v) and row-normalised. FastGCN uses
// one global p(v) ∝ Σ_u Â(u,v)² for every minibatch instead; since that draw
// ignores the frontier, a drawn vertex that no destination links to is left
// out of the minibatch (it would carry nothing to the seeds). Known gap: a
// self loop stored in A counts twice in p (as an edge and as I) but once in
// the block; imported OGB data and generated graphs store none.
//
// The rows of A come from a row_source: the whole graph in memory, or a graph
// sharded over ranks whose rows are fetched per hop (distributed/). Either
// way the same entries are drawn, since draws are keyed by vertex id and
// fetched rows keep A's stored order.
//
// With a cuda executor (node-wise so far) the graph must be in device or
// pinned host memory, and the bulk comes back on the device (vertices and
// blocks in device memory, segment offsets in pinned host memory);
// copy_to_host gives a host copy to extract or digest.
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

  [[nodiscard]] const sampler_options& options() const { return options_; }
  // Wall time spent per stage over every call so far.
  [[nodiscard]] const stage_times& times() const { return times_; }
  // On a cuda executor, each stage's time on the device (CUDA events),
  // summed over every bulk so far; waits for the stream. Empty otherwise.
  [[nodiscard]] const stage_times& device_times();

 private:
  sampled_layer sample_node_wise(const segmented_vertices& frontier,
                                 std::span<const std::int64_t> minibatch_ids, std::uint32_t epoch,
                                 std::uint32_t hop);
  sampled_layer sample_layer_wise(const segmented_vertices& frontier,
                                  std::span<const std::int64_t> minibatch_ids, std::uint32_t epoch,
                                  std::uint32_t hop);

  // A layer-wise hop of sample_slices: the part of `whole` (this hop's
  // frontier of each minibatch) reached by `part` (a sub-list of it per
  // segment), and the whole next frontier.
  struct split_hop {
    sampled_layer part;
    segmented_vertices whole_sources;
  };
  bulk_sample sample_layer_wise_parts(std::uint32_t epoch, segmented_vertices whole,
                                      segmented_vertices part,
                                      std::span<const std::int64_t> minibatch_ids,
                                      comm::communicator* ranks);
  split_hop sample_layer_wise_part(const segmented_vertices& whole, const segmented_vertices& part,
                                   std::span<const std::int64_t> minibatch_ids, std::uint32_t epoch,
                                   std::uint32_t hop, comm::communicator& ranks);
  // The columns [first, last) of Q·(A + I) (LADIES) or of the global weights
  // (FastGCN), each entry bit-identical to the whole product's.
  csr_matrix column_weights_in_range(const segmented_vertices& frontier,
                                     std::span<const vertex_t> distinct, const gathered_rows& rows,
                                     vertex_t first, vertex_t last);
  // Where the owners cut the rows (or FastGCN has no whole graph here): the
  // frontier's rows restricted to [first, last), the columns [first, last)
  // of Q·(A + I) from them, and of FastGCN's distribution (computed from
  // every row's slice at the first hop, collectively, then kept), each entry
  // bit-identical to the whole product's.
  column_slices fetch_columns(std::span<const vertex_t> vertices, vertex_t first, vertex_t last);
  csr_matrix column_weights_from_slices(const segmented_vertices& frontier,
                                        std::span<const vertex_t> distinct,
                                        const column_slices& slices, vertex_t first, vertex_t last);
  csr_view global_weights_in_range(vertex_t first, vertex_t last, int slices);
  // The block rows of `part`'s destinations from every rank's slices of the
  // whole frontier's rows: each rank's entries into the sources, gathered.
  csr_matrix blocks_from_slices(const segmented_vertices& whole, const segmented_vertices& part,
                                const segmented_vertices& sources, std::span<const float> inverse_p,
                                std::span<const vertex_t> distinct, const column_slices& slices,
                                comm::communicator& ranks);
  // The columns [first, last) of a matrix sample_slices reads often, kept
  // between calls (the range is the same for every call of a run's ranks).
  struct column_slice {
    vertex_t first = 0;
    vertex_t last = -1;
    int slices = 0;  // global_weights_in_range's key
    csr_matrix columns;
  };
  csr_view owned_columns(csr_view whole, column_slice& cache, vertex_t first, vertex_t last);
  csr_matrix draw_split_rows(csr_view weights, std::span<const vertex_t> weight_row,
                             const kernels::row_streams& streams, std::int64_t fanout,
                             comm::communicator& ranks);

  // The block rows of `destinations` (a sub-list of the frontier per
  // segment) over `sources`, weighted by inverse_p, from `rows`: the whole
  // graph in memory, or the rows of `distinct` (the frontier) fetched.
  csr_matrix extract_layer_blocks(const segmented_vertices& destinations,
                                  const segmented_vertices& sources,
                                  std::span<const float> inverse_p,
                                  std::span<const vertex_t> distinct, const gathered_rows& rows);

  // Host-built inputs of a hop (seeds, minibatch ids) where the executor's
  // kernels read them: unchanged on the host back ends; on cuda, vertices in
  // device memory and segment offsets in pinned host memory.
  [[nodiscard]] segmented_vertices on_executor(segmented_vertices vertices) const;
  [[nodiscard]] buffer<std::uint32_t> on_executor(std::span<const std::uint32_t> values) const;
  [[nodiscard]] buffer<vertex_t> on_executor(std::span<const vertex_t> values) const;

  void initialise();
  gathered_rows fetch_rows(std::span<const vertex_t> vertices);
  csr_matrix column_weights(const segmented_vertices& frontier);
  csr_matrix column_weights(const segmented_vertices& frontier, std::span<const vertex_t> distinct,
                            const gathered_rows& rows);

  std::unique_ptr<local_rows> own_rows_;  // set when constructed from a graph
  row_source& rows_;
  sampler_options options_;
  executor exec_;
  stage_times times_;
  device_stage_log device_log_;
  stage_times device_times_;
  csr_matrix global_column_weights_;  // FastGCN's distribution, computed once
  column_slice owned_graph_;
  column_slice owned_global_weights_;
};

}  // namespace bulkgnn::sampler
