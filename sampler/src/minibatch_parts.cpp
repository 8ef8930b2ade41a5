#include "minibatch_parts.hpp"

#include "bulkgnn/core/error.hpp"

#include <algorithm>
#include <unordered_map>
#include <vector>

namespace bulkgnn::sampler {

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
      layer.blocks.values.insert(layer.blocks.values.end(), block.values.begin(),
                                 block.values.end());
      layer.blocks.rows += block.rows;
      layer.blocks.cols = std::max(layer.blocks.cols, block.cols);
      layer.row_offsets.push_back(layer.blocks.rows);
    }
  }
  return bulk;
}

bulk_sample parts_of(const bulk_sample& sampled, const segmented_vertices& whole,
                     const segmented_vertices& part, std::string_view kind) {
  std::vector<minibatch> parts;
  std::unordered_map<vertex_t, vertex_t> position_of;
  std::vector<vertex_t> positions;
  for (std::int64_t j = 0; j < sampled.count(); ++j) {
    const auto all = whole.segment(j);
    position_of.clear();
    for (std::size_t i = 0; i < all.size(); ++i)
      position_of.emplace(all[i], static_cast<vertex_t>(i));
    BULKGNN_EXPECTS(position_of.size() == all.size(), "{}: minibatch {} repeats a seed", kind,
                    sampled.minibatch_ids[j]);
    positions.clear();
    for (const vertex_t v : part.segment(j)) {
      const auto found = position_of.find(v);
      BULKGNN_EXPECTS(found != position_of.end(),
                      "{}: minibatch {}'s slice holds vertex {}, which is none of its seeds", kind,
                      sampled.minibatch_ids[j], v);
      positions.push_back(found->second);
    }
    parts.push_back(restrict_to_seeds(sampled.extract(j), positions));
  }
  return bulk_of(parts, sampled.minibatch_ids, sampled.layers.size());
}

}  // namespace bulkgnn::sampler
