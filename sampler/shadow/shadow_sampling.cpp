#include "shadow_sampling.hpp"

#include "../node_wise/node_wise_sampling.hpp"
#include "bulkgnn/core/error.hpp"
#include "bulkgnn/kernels/elementwise.hpp"
#include "bulkgnn/kernels/gather_rows.hpp"
#include "bulkgnn/kernels/relabel.hpp"

#include <algorithm>
#include <memory>
#include <utility>
#include <vector>

namespace bulkgnn::sampler {

namespace {

// A bulk holding `parts` (minibatches of `layers` blocks each, DGL order),
// as a sampler lays one out: layer h's sources are the prefix of each part's
// input nodes that its block L-1-h reads.
bulk_sample bulk_of(std::span<const minibatch> parts, std::span<const std::int64_t> ids,
                    std::size_t layers) {
  bulk_sample bulk;
  bulk.minibatch_ids.assign(ids.begin(), ids.end());
  bulk.layers.resize(layers);
  for (const auto& mb : parts) {
    bulk.seeds.push_segment(mb.seeds);
    for (std::size_t h = 0; h < layers; ++h) {
      const csr_matrix& block = mb.blocks[layers - 1 - h];
      sampled_layer& layer = bulk.layers[h];
      layer.sources.push_segment(
          std::span<const vertex_t>(mb.input_nodes).first(static_cast<std::size_t>(block.cols)));
      const edge_t base = layer.blocks.nnz();
      for (std::int64_t r = 0; r < block.rows; ++r)
        layer.blocks.indptr.push_back(base + block.indptr[r + 1]);
      layer.blocks.indices.insert(layer.blocks.indices.end(), block.indices.begin(),
                                  block.indices.end());
      layer.blocks.rows += block.rows;
      layer.blocks.cols = std::max(layer.blocks.cols, block.cols);
      layer.row_offsets.push_back(layer.blocks.rows);
    }
  }
  return bulk;
}

class shadow_sampling final : public sampling_algorithm {
 public:
  explicit shadow_sampling(sampling_context& context)
      : sampling_algorithm(context), reach_(node_wise_entry().make(context)) {}

  bulk_sample sample(std::uint32_t epoch, segmented_vertices seeds,
                     std::span<const std::int64_t> minibatch_ids) override {
    bulk_sample reached = reach_->sample(epoch, std::move(seeds), minibatch_ids);
    const auto layers = static_cast<std::size_t>(block_count(context().options));
    const segmented_vertices& vertices = reached.layers.back().sources;
    const csr_matrix induced = induced_subgraphs(vertices);

    bulk_sample subgraphs;
    subgraphs.minibatch_ids = std::move(reached.minibatch_ids);
    subgraphs.seeds = std::move(reached.seeds);
    subgraphs.layers.reserve(layers);
    subgraphs.layers.push_back({.sources = vertices,
                                .blocks = seed_rows(induced, vertices, subgraphs.seeds),
                                .row_offsets = subgraphs.seeds.offsets});
    for (std::size_t h = 1; h < layers; ++h)
      subgraphs.layers.push_back(
          {.sources = vertices, .blocks = induced, .row_offsets = vertices.offsets});
    return needed_rows_only(subgraphs);
  }

  // A slice of a minibatch's seeds shares the subgraph that all its seeds
  // span, so the part is cut from the whole minibatch (restrict_to_seeds),
  // which every rank samples; the sampler's rows are fetched collectively.
  bulk_sample sample_part(std::uint32_t epoch, segmented_vertices whole, segmented_vertices part,
                          std::span<const std::int64_t> minibatch_ids,
                          comm::communicator*) override {
    const bulk_sample sampled = sample(epoch, whole, minibatch_ids);
    std::vector<minibatch> parts;
    for (std::int64_t j = 0; j < sampled.count(); ++j) {
      const auto all = whole.segment(j);
      const auto mine = part.segment(j);
      const auto begin =
          mine.empty() ? all.begin() : std::find(all.begin(), all.end(), mine.front());
      const auto first = static_cast<std::int64_t>(begin - all.begin());
      BULKGNN_EXPECTS(first + std::ssize(mine) <= std::ssize(all) &&
                          std::equal(mine.begin(), mine.end(), begin),
                      "shadow: minibatch {}'s slice is not a run of its seeds (repeated seeds?)",
                      sampled.minibatch_ids[j]);
      parts.push_back(restrict_to_seeds(sampled.extract(j), first, first + std::ssize(mine)));
    }
    return bulk_of(parts, minibatch_ids, sampled.layers.size());
  }

 private:
  // Every layer on the whole subgraph computes rows that the seeds never
  // read (a vertex that sage reached at hop 2 may lie one induced edge from
  // a seed, and rows past a seed's reach at that depth feed nothing): each
  // minibatch keeps what its seeds read, restrict_to_seeds of all its seeds,
  // which gives the seeds the same outputs, and lets a slice of the seeds
  // be cut from it as from any minibatch.
  static bulk_sample needed_rows_only(const bulk_sample& subgraphs) {
    std::vector<minibatch> needed;
    needed.reserve(static_cast<std::size_t>(subgraphs.count()));
    for (std::int64_t j = 0; j < subgraphs.count(); ++j)
      needed.push_back(restrict_to_seeds(subgraphs.extract(j), 0, subgraphs.seeds.size(j)));
    return bulk_of(needed, subgraphs.minibatch_ids, subgraphs.layers.size());
  }

  // A[V_j, V_j] for each minibatch's vertices V_j: one row per vertex (the
  // seeds first, as V_j lists them), local column ids, no values.
  csr_matrix induced_subgraphs(const segmented_vertices& vertices) {
    auto& c = context();
    executor_stage stage(c.exec, c.times, c.device_log, "induce");
    const gathered_rows rows = c.rows.rows(vertices.vertices);
    segmented_vertices row_positions;
    row_positions.vertices = on_executor(c.exec, rows.row_of);
    row_positions.offsets = vertices.offsets;
    buffer<float> ones(vertices.vertices.size(), c.exec.memory());
    kernels::fill(c.exec, std::span<float>(ones.data(), ones.size()), 1.0f);
    csr_view pattern = rows.rows;
    pattern.values = {};
    csr_matrix induced =
        kernels::extract_blocks(c.exec, pattern, row_positions, vertices, ones, false);
    induced.values = buffer<float>(0, c.exec.memory());
    return induced;
  }

  // The rows of each minibatch's seeds: the first rows of its segment.
  csr_matrix seed_rows(const csr_matrix& induced, const segmented_vertices& vertices,
                       const segmented_vertices& seeds) {
    auto& c = context();
    std::vector<vertex_t> rows;
    rows.reserve(seeds.vertices.size());
    for (std::int64_t j = 0; j < seeds.segments(); ++j)
      for (std::int64_t i = 0; i < seeds.size(j); ++i)
        rows.push_back(static_cast<vertex_t>(vertices.offsets[j] + i));
    return kernels::gather_rows(c.exec, induced.view(), on_executor(c.exec, std::span(rows)));
  }

  std::unique_ptr<sampling_algorithm> reach_;
};

}  // namespace

sampler_entry shadow_entry() {
  return {.name = "shadow",
          .aliases = {"shadow-khop"},
          .summary =
              "ShaDow-GNN (DGL's ShaDowKHopSampler): the subgraph induced on the vertices "
              "that sage's fanouts reach, every layer on all of its edges",
          .fanout = fanout_unit::per_destination,
          .layer = "sage",
          // The minibatches are trimmed to what the seeds read on the host.
          .host_only = true,
          .any_depth = true,
          .takes_replacement = true,
          .takes_weights = true,
          .make = make_sampling<shadow_sampling>};
}

}  // namespace bulkgnn::sampler
