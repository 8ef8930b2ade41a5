#include "induced_subgraph_sampling.hpp"

#include "minibatch_parts.hpp"

#include "bulkgnn/core/error.hpp"
#include "bulkgnn/kernels/elementwise.hpp"
#include "bulkgnn/kernels/relabel.hpp"

#include <algorithm>
#include <iterator>
#include <utility>
#include <vector>

namespace bulkgnn::sampler {

namespace {

// Minibatch j with every layer on its induced subgraph: each block holds
// the subgraph's rows of segment j, the seeds' layer only its seeds' rows
// (the segment's first ones).
minibatch on_subgraph(const csr_matrix& induced, const segmented_vertices& vertices,
                      const segmented_vertices& seeds, std::int64_t j, std::size_t layers) {
  const auto segment = vertices.segment(j);
  const auto seed_count = seeds.size(j);
  minibatch mb;
  mb.seeds.assign(seeds.segment(j).begin(), seeds.segment(j).end());
  mb.input_nodes.assign(segment.begin(), segment.end());
  const auto rows_of = [&](std::int64_t count) {
    csr_matrix block;
    block.rows = count;
    block.cols = std::ssize(segment);
    const edge_t first = induced.indptr[vertices.offsets[j]];
    for (std::int64_t r = 0; r < count; ++r)
      block.indptr.push_back(induced.indptr[vertices.offsets[j] + r + 1] - first);
    block.indices.assign(induced.indices.begin() + first,
                         induced.indices.begin() + first + block.indptr.back());
    if (!induced.values.empty())
      block.values.assign(induced.values.begin() + first,
                          induced.values.begin() + first + block.indptr.back());
    return block;
  };
  mb.blocks.assign(layers - 1, rows_of(std::ssize(segment)));
  mb.blocks.push_back(rows_of(seed_count));
  return mb;
}

}  // namespace

bulk_sample induced_subgraph_sampling::sample(std::uint32_t epoch, segmented_vertices seeds,
                                              std::span<const std::int64_t> minibatch_ids) {
  const auto layers = static_cast<std::size_t>(block_count(context().options));
  const segmented_vertices vertices = subgraph_vertices(epoch, seeds, minibatch_ids);
  const csr_matrix induced = induced_subgraphs(vertices);
  std::vector<minibatch> needed;
  needed.reserve(static_cast<std::size_t>(seeds.segments()));
  for (std::int64_t j = 0; j < seeds.segments(); ++j)
    needed.push_back(
        restrict_to_seeds(on_subgraph(induced, vertices, seeds, j, layers), 0, seeds.size(j)));
  return bulk_of(needed, minibatch_ids, layers);
}

bulk_sample induced_subgraph_sampling::sample_part(std::uint32_t epoch, segmented_vertices whole,
                                                   segmented_vertices part,
                                                   std::span<const std::int64_t> minibatch_ids,
                                                   comm::communicator*) {
  return parts_of(sample(epoch, whole, minibatch_ids), whole, part, context().options.kind);
}

csr_matrix induced_subgraph_sampling::induced_subgraphs(const segmented_vertices& vertices) {
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

segmented_vertices induced_subgraph_sampling::subgraph_vertices(std::uint32_t,
                                                                const segmented_vertices& seeds,
                                                                std::span<const std::int64_t>) {
  const auto& c = context();
  BULKGNN_EXPECTS(c.subgraphs != nullptr && c.subgraphs->segments() == seeds.segments(),
                  "sampler_options.kind {}: its minibatches are subgraphs that an epoch plan "
                  "cuts; sample them from a plan made with the sampler's subgraph batching",
                  c.options.kind);
  segmented_vertices vertices;
  std::vector<vertex_t> sorted_seeds, segment;
  for (std::int64_t j = 0; j < seeds.segments(); ++j) {
    const auto mine = seeds.segment(j);
    const auto all = c.subgraphs->segment(j);
    sorted_seeds.assign(mine.begin(), mine.end());
    std::sort(sorted_seeds.begin(), sorted_seeds.end());
    BULKGNN_EXPECTS(std::includes(all.begin(), all.end(), sorted_seeds.begin(), sorted_seeds.end()),
                    "{}: minibatch {} has seeds outside its subgraph", c.options.kind, j);
    segment.assign(mine.begin(), mine.end());
    std::set_difference(all.begin(), all.end(), sorted_seeds.begin(), sorted_seeds.end(),
                        std::back_inserter(segment));
    vertices.push_segment(segment);
  }
  return vertices;
}

}  // namespace bulkgnn::sampler
