#include "bulkgnn/sampler/minibatch.hpp"

#include "bulkgnn/core/error.hpp"
#include "bulkgnn/kernels/gather_rows.hpp"

#include <algorithm>
#include <iterator>
#include <numeric>
#include <utility>

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
  mb.whole_seeds = whole_seeds.empty() ? 0 : whole_seeds[static_cast<std::size_t>(j)];
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

minibatch bulk_sample::extract(std::int64_t j, std::span<const std::int32_t> labels,
                               const executor& exec) const {
  if (host_accessible(seeds.vertices.space())) return extract(j, labels);
  BULKGNN_ASSERT(j >= 0 && j < count());
  memory_resource& target = exec.memory();
  minibatch mb;
  mb.index = bulkgnn::copy_to_host(minibatch_ids)[j];
  mb.whole_seeds = whole_seeds.empty() ? 0 : whole_seeds[static_cast<std::size_t>(j)];
  // Segment offsets are host-readable (pinned) wherever the vertices live.
  const auto seed_span = seeds.segment(j);
  mb.seeds = copy_to(seed_span, target);
  if (!labels.empty()) {
    std::vector<vertex_t> host_seeds(seed_span.size());
    target.copy(host_seeds.data(), seed_span.data(), seed_span.size_bytes());
    std::vector<std::int32_t> seed_labels;
    seed_labels.reserve(host_seeds.size());
    for (const vertex_t v : host_seeds) seed_labels.push_back(labels[v]);
    mb.labels = copy_to(std::span<const std::int32_t>(seed_labels), target);
  }
  mb.input_nodes = copy_to(layers.empty() ? seed_span : layers.back().sources.segment(j), target);
  for (auto layer = layers.rbegin(); layer != layers.rend(); ++layer) {
    const auto offsets = bulkgnn::copy_to_host(layer->row_offsets);
    std::vector<vertex_t> rows(static_cast<std::size_t>(offsets[j + 1] - offsets[j]));
    std::iota(rows.begin(), rows.end(), static_cast<vertex_t>(offsets[j]));
    const auto rows_there = copy_to(std::span<const vertex_t>(rows), target);
    auto block =
        kernels::gather_rows(exec, layer->blocks.view(), std::span<const vertex_t>(rows_there));
    block.cols = layer->sources.size(j);
    mb.blocks.push_back(std::move(block));
  }
  return mb;
}

minibatch restrict_to_seeds(const minibatch& mb, std::int64_t begin, std::int64_t end) {
  BULKGNN_EXPECTS(0 <= begin && begin <= end && end <= static_cast<std::int64_t>(mb.seeds.size()),
                  "restrict_to_seeds: seeds [{}, {}) of a minibatch of {}", begin, end,
                  mb.seeds.size());
  std::vector<vertex_t> positions(static_cast<std::size_t>(end - begin));
  std::iota(positions.begin(), positions.end(), static_cast<vertex_t>(begin));
  return restrict_to_seeds(mb, positions);
}

minibatch restrict_to_seeds(const minibatch& mb, std::span<const vertex_t> positions) {
  std::vector<csr_view> blocks;
  blocks.reserve(mb.blocks.size());
  for (const auto& block : mb.blocks) blocks.push_back(block.view());
  return restrict_to_seeds(mb, blocks, positions);
}

minibatch restrict_to_seeds(const minibatch& mb, std::span<const csr_view> blocks,
                            std::span<const vertex_t> positions) {
  const auto seeds = static_cast<vertex_t>(mb.seeds.size());
  std::vector<bool> taken(mb.seeds.size(), false);
  for (const vertex_t p : positions) {
    BULKGNN_EXPECTS(p >= 0 && p < seeds && !taken[static_cast<std::size_t>(p)],
                    "restrict_to_seeds: seed position {} is out of [0, {}) or repeated", p, seeds);
    taken[static_cast<std::size_t>(p)] = true;
  }
  minibatch part;
  part.index = mb.index;
  part.whole_seeds = mb.whole_seeds;
  for (const vertex_t p : positions) {
    part.seeds.push_back(mb.seeds[p]);
    if (!mb.labels.empty()) part.labels.push_back(mb.labels[p]);
  }
  // Rows kept at the current level, as the whole minibatch's local ids
  // (which index its input_nodes, since destinations come first everywhere).
  std::vector<vertex_t> kept(positions.begin(), positions.end());
  // Each block is built in vectors and copied once into its buffers.
  std::vector<vertex_t> new_id, sources;
  std::vector<edge_t> indptr;
  std::vector<vertex_t> indices;
  std::vector<float> values;
  part.blocks.resize(blocks.size());
  for (auto b = static_cast<std::ptrdiff_t>(blocks.size()) - 1; b >= 0; --b) {
    const csr_view& whole = blocks[static_cast<std::size_t>(b)];
    new_id.assign(static_cast<std::size_t>(whole.cols), -1);
    sources = kept;
    for (std::size_t i = 0; i < kept.size(); ++i) new_id[kept[i]] = static_cast<vertex_t>(i);
    indptr.assign(1, 0);
    indices.clear();
    values.clear();
    for (const vertex_t row : kept) {
      const auto columns = whole.row(row);
      for (const vertex_t column : columns) {
        if (new_id[column] < 0) {
          new_id[column] = static_cast<vertex_t>(sources.size());
          sources.push_back(column);
        }
        indices.push_back(new_id[column]);
      }
      if (whole.weighted()) {
        const auto weights = whole.row_values(row);
        values.insert(values.end(), weights.begin(), weights.end());
      }
      indptr.push_back(static_cast<edge_t>(indices.size()));
    }
    auto& block = part.blocks[static_cast<std::size_t>(b)];
    block.rows = static_cast<std::int64_t>(kept.size());
    block.cols = static_cast<std::int64_t>(sources.size());
    block.indptr.assign(indptr.begin(), indptr.end());
    block.indices.assign(indices.begin(), indices.end());
    block.values.assign(values.begin(), values.end());
    std::swap(kept, sources);
  }
  part.input_nodes.reserve(kept.size());
  for (const vertex_t v : kept) part.input_nodes.push_back(mb.input_nodes[v]);
  return part;
}

namespace {

void add_edge(multiset_hasher& edges, vertex_t dst, vertex_t src) {
  edges.add((std::uint64_t{static_cast<std::uint32_t>(dst)} << 32) |
            static_cast<std::uint32_t>(src));
}

void add_hop(digest_hasher& hasher, std::uint64_t count, std::uint64_t sum) {
  hasher.add(count);
  hasher.add(sum);
}

void add_hop(digest_hasher& hasher, const multiset_hasher& edges) {
  add_hop(hasher, edges.count(), edges.sum());
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

std::vector<destination_edges> bulk_sample::destinations(std::int64_t j) const {
  std::vector<destination_edges> out;
  for (std::size_t hop = 0; hop < layers.size(); ++hop) {
    const auto& layer = layers[hop];
    const auto sources = layer.sources.segment(j);
    for (auto r = layer.row_offsets[j]; r < layer.row_offsets[j + 1]; ++r) {
      const auto dst = sources[r - layer.row_offsets[j]];
      multiset_hasher edges;
      for (auto e = layer.blocks.indptr[r]; e < layer.blocks.indptr[r + 1]; ++e)
        add_edge(edges, dst, sources[layer.blocks.indices[e]]);
      out.push_back(
          {minibatch_ids[j], static_cast<std::int64_t>(hop), dst, edges.count(), edges.sum()});
    }
  }
  return out;
}

std::uint64_t merge_digest(std::span<const vertex_t> seeds, std::int64_t hops,
                           std::vector<destination_edges> destinations) {
  std::sort(destinations.begin(), destinations.end(), [](const auto& x, const auto& y) {
    return std::pair(x.hop, x.destination) < std::pair(y.hop, y.destination);
  });
  digest_hasher hasher;
  hasher.add(seeds);
  auto next = destinations.begin();
  for (std::int64_t hop = 0; hop < hops; ++hop) {
    std::uint64_t count = 0;
    std::uint64_t sum = 0;
    for (; next != destinations.end() && next->hop == hop; ++next) {
      if (next != destinations.begin() && std::prev(next)->hop == hop &&
          std::prev(next)->destination == next->destination) {
        const auto previous = std::prev(next);
        BULKGNN_EXPECTS(previous->count == next->count && previous->sum == next->sum,
                        "merge_digest: minibatch {}, hop {}: two parts give vertex {} different "
                        "edges",
                        next->minibatch, hop, next->destination);
        continue;
      }
      count += next->count;
      sum += next->sum;
    }
    add_hop(hasher, count, sum);
  }
  BULKGNN_EXPECTS(next == destinations.end(), "merge_digest: destinations beyond hop {}", hops - 1);
  return hasher.value();
}

namespace {

segmented_vertices copy_to_host(const segmented_vertices& s) {
  segmented_vertices out;
  out.vertices = bulkgnn::copy_to_host(s.vertices);
  out.offsets = bulkgnn::copy_to_host(s.offsets);
  return out;
}

}  // namespace

bulk_sample copy_to_host(const bulk_sample& bulk) {
  bulk_sample out;
  out.minibatch_ids = bulkgnn::copy_to_host(bulk.minibatch_ids);
  out.seeds = copy_to_host(bulk.seeds);
  out.whole_seeds = bulk.whole_seeds;
  for (const auto& layer : bulk.layers)
    out.layers.push_back({copy_to_host(layer.sources), bulkgnn::copy_to_host(layer.blocks),
                          bulkgnn::copy_to_host(layer.row_offsets)});
  return out;
}

minibatch copy_to_host(const minibatch& mb) {
  minibatch out;
  out.index = mb.index;
  out.seeds = bulkgnn::copy_to_host(mb.seeds);
  out.whole_seeds = mb.whole_seeds;
  out.labels = bulkgnn::copy_to_host(mb.labels);
  out.input_nodes = bulkgnn::copy_to_host(mb.input_nodes);
  for (const auto& block : mb.blocks) out.blocks.push_back(bulkgnn::copy_to_host(block));
  return out;
}

edge_t bulk_sample::sampled_edges() const {
  edge_t total = 0;
  // The indices' size, which the host knows wherever the blocks live.
  for (const auto& layer : layers) total += static_cast<edge_t>(layer.blocks.indices.size());
  return total;
}

std::size_t bulk_sample::size_bytes() const {
  std::size_t bytes = minibatch_ids.size_bytes() + seeds.size_bytes();
  for (const auto& layer : layers)
    bytes +=
        layer.sources.size_bytes() + layer.blocks.size_bytes() + layer.row_offsets.size_bytes();
  return bytes;
}

std::size_t minibatch::size_bytes() const {
  std::size_t bytes = seeds.size_bytes() + labels.size_bytes() + input_nodes.size_bytes();
  for (const auto& block : blocks) bytes += block.size_bytes();
  return bytes;
}

void run_digest::add(std::uint64_t minibatch_digest) { hasher_.add(minibatch_digest); }

std::uint64_t run_digest::value() const { return hasher_.value(); }

}  // namespace bulkgnn::sampler
