#include "induced_subgraph_sampling.hpp"

#include "minibatch_parts.hpp"

#include "bulkgnn/core/error.hpp"
#include "bulkgnn/kernels/elementwise.hpp"
#include "bulkgnn/kernels/relabel.hpp"

#include <algorithm>
#include <iterator>
#include <numeric>
#include <utility>
#include <vector>

namespace bulkgnn::sampler {

namespace {

// What minibatch j's seeds read of its induced subgraph with every layer on
// it (each layer's block views the subgraph's rows of segment j; the
// seeds, the segment's first vertices, are the last layer's rows).
minibatch seeds_reach(const csr_matrix& induced, const segmented_vertices& vertices,
                      const segmented_vertices& seeds, std::int64_t j, std::size_t layers) {
  const auto segment = vertices.segment(j);
  minibatch whole;
  whole.seeds.assign(seeds.segment(j).begin(), seeds.segment(j).end());
  whole.input_nodes.assign(segment.begin(), segment.end());
  const auto first_row = static_cast<std::size_t>(vertices.offsets[j]);
  const auto rows = std::span<const edge_t>(induced.indptr).subspan(first_row, segment.size() + 1);
  const auto first = static_cast<std::size_t>(rows.front());
  const auto entries = static_cast<std::size_t>(rows.back()) - first;
  const csr_view subgraph{
      .rows = std::ssize(segment),
      .cols = std::ssize(segment),
      .indptr = rows,
      .indices = std::span<const vertex_t>(induced.indices).subspan(first, entries),
      .values = induced.values.empty()
                    ? std::span<const float>()
                    : std::span<const float>(induced.values).subspan(first, entries)};
  const std::vector<csr_view> blocks(layers, subgraph);
  std::vector<vertex_t> positions(static_cast<std::size_t>(seeds.size(j)));
  std::iota(positions.begin(), positions.end(), vertex_t{0});
  return restrict_to_seeds(whole, blocks, positions);
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
    needed.push_back(seeds_reach(induced, vertices, seeds, j, layers));
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
