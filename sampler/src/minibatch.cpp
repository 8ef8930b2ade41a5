#include "bulkgnn/sampler/minibatch.hpp"

#include "bulkgnn/core/error.hpp"

namespace bulkgnn::sampler {

namespace {

// Copies minibatch j's rows of a layer's blocks into a standalone CSR matrix.
csr_matrix extract_block(const sampled_layer& layer, std::int64_t j) {
  const auto row_begin = layer.row_offsets[j];
  const auto row_end = layer.row_offsets[j + 1];
  const auto& all = layer.blocks;
  csr_matrix block;
  block.rows = row_end - row_begin;
  block.cols = layer.sources.size(j);
  const auto first = all.indptr[row_begin];
  const auto last = all.indptr[row_end];
  block.indptr.resize(block.rows + 1);
  for (std::int64_t r = 0; r <= block.rows; ++r)
    block.indptr[r] = all.indptr[row_begin + r] - first;
  block.indices.assign(all.indices.begin() + first, all.indices.begin() + last);
  if (!all.values.empty())
    block.values.assign(all.values.begin() + first, all.values.begin() + last);
  return block;
}

}  // namespace

minibatch bulk_sample::extract(std::int64_t j, std::span<const std::int32_t> labels) const {
  BULKGNN_ASSERT(j >= 0 && j < count());
  minibatch mb;
  mb.index = minibatch_ids[j];
  const auto seed_span = seeds.segment(j);
  mb.seeds.assign(seed_span.begin(), seed_span.end());
  if (!labels.empty())
    for (auto v : mb.seeds) mb.labels.push_back(labels[v]);
  const auto input = layers.empty() ? seed_span : layers.back().sources.segment(j);
  mb.input_nodes.assign(input.begin(), input.end());
  for (auto layer = layers.rbegin(); layer != layers.rend(); ++layer)
    mb.blocks.push_back(extract_block(*layer, j));
  return mb;
}

namespace {

void add_edge(multiset_hasher& edges, vertex_t dst, vertex_t src) {
  edges.add((std::uint64_t{static_cast<std::uint32_t>(dst)} << 32) |
            static_cast<std::uint32_t>(src));
}

void add_hop(digest_hasher& hasher, const multiset_hasher& edges) {
  hasher.add(edges.count());
  hasher.add(edges.sum());
}

}  // namespace

std::uint64_t bulk_sample::digest(std::int64_t j) const {
  digest_hasher hasher;
  hasher.add(seeds.segment(j));
  for (const auto& layer : layers) {
    const auto sources = layer.sources.segment(j);
    const auto& blocks = layer.blocks;
    multiset_hasher edges;
    for (auto r = layer.row_offsets[j]; r < layer.row_offsets[j + 1]; ++r) {
      const auto dst = sources[r - layer.row_offsets[j]];
      for (auto e = blocks.indptr[r]; e < blocks.indptr[r + 1]; ++e)
        add_edge(edges, dst, sources[blocks.indices[e]]);
    }
    add_hop(hasher, edges);
  }
  return hasher.value();
}

std::uint64_t digest(const minibatch& mb) {
  digest_hasher hasher;
  hasher.add(mb.seeds);
  // Block b's sources are the first cols input nodes (each hop's destinations
  // are a prefix of its sources); hop 0 from the seeds is blocks.back().
  for (auto block = mb.blocks.rbegin(); block != mb.blocks.rend(); ++block) {
    const auto sources = std::span<const vertex_t>(mb.input_nodes).first(block->cols);
    multiset_hasher edges;
    for (std::int64_t r = 0; r < block->rows; ++r)
      for (auto e = block->indptr[r]; e < block->indptr[r + 1]; ++e)
        add_edge(edges, sources[r], sources[block->indices[e]]);
    add_hop(hasher, edges);
  }
  return hasher.value();
}

edge_t bulk_sample::sampled_edges() const {
  edge_t total = 0;
  for (const auto& layer : layers) total += layer.blocks.nnz();
  return total;
}

void run_digest::add(std::uint64_t minibatch_digest) { hasher_.add(minibatch_digest); }

std::uint64_t run_digest::value() const { return hasher_.value(); }

}  // namespace bulkgnn::sampler
