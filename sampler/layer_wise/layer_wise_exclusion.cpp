#include "layer_wise_exclusion.hpp"

#include "bulkgnn/core/error.hpp"

#include <algorithm>
#include <cstdint>
#include <vector>

namespace bulkgnn::sampler::detail {

namespace {

std::span<const std::uint64_t> segment_keys(const kernels::excluded_edges& excluded,
                                            std::int64_t segment) {
  const auto first = static_cast<std::size_t>(excluded.offsets[segment]);
  const auto last = static_cast<std::size_t>(excluded.offsets[segment + 1]);
  return std::span(excluded.keys).subspan(first, last - first);
}

bool excludes(std::span<const std::uint64_t> keys, vertex_t destination, vertex_t source) {
  return std::ranges::binary_search(keys, kernels::edge_key(destination, source));
}

// The sums of Q·A's entries (j, touched[t]) over the edges a segment keeps:
// for each frontier vertex u in Q's row order, each kept edge v → u adds
// q(j, u), as kernels::spgemm adds them.
struct kept_sums {
  std::vector<double> sum;
  std::vector<bool> any;
};

kept_sums sums_over_kept_edges(std::span<const vertex_t> touched,
                               std::span<const vertex_t> frontier, std::span<const float> q_values,
                               std::span<const std::uint64_t> keys, const auto& row_of_vertex) {
  kept_sums sums{std::vector<double>(touched.size(), 0.0), std::vector<bool>(touched.size())};
  for (std::size_t k = 0; k < frontier.size(); ++k)
    for (const vertex_t v : row_of_vertex(frontier[k])) {
      const auto at = std::ranges::lower_bound(touched, v);
      if (at == touched.end() || *at != v || excludes(keys, frontier[k], v)) continue;
      const auto t = static_cast<std::size_t>(at - touched.begin());
      sums.sum[t] += static_cast<double>(q_values[k]);
      sums.any[t] = true;
    }
  return sums;
}

}  // namespace

csr_matrix weights_without_excluded(csr_view weights, csr_view q, csr_view rows,
                                    std::span<const vertex_t> row_of,
                                    std::span<const vertex_t> distinct,
                                    const kernels::excluded_edges& excluded) {
  BULKGNN_EXPECTS(excluded.segments() == weights.rows && q.rows == weights.rows,
                  "layer-wise sampling: {} segments of excluded edges for {} minibatches",
                  excluded.segments(), weights.rows);
  const auto row_of_vertex = [&](vertex_t u) {
    const auto k = std::ranges::lower_bound(distinct, u) - distinct.begin();
    return rows.row(row_of[static_cast<std::size_t>(k)]);
  };
  std::vector<edge_t> indptr{0};
  std::vector<vertex_t> indices;
  std::vector<float> values;
  indices.reserve(static_cast<std::size_t>(weights.nnz()));
  values.reserve(indices.capacity());
  for (std::int64_t j = 0; j < weights.rows; ++j) {
    const auto keys = segment_keys(excluded, j);
    const auto frontier = q.row(j);
    const auto q_values = q.row_values(j);
    // The columns whose sums an excluded edge v → u (u in the frontier) is in.
    std::vector<vertex_t> touched;
    for (const std::uint64_t key : keys) {
      const auto u = static_cast<vertex_t>(key >> 32);
      const auto v = static_cast<vertex_t>(key & 0xFFFFFFFFu);
      if (std::ranges::binary_search(frontier, u) &&
          std::ranges::binary_search(row_of_vertex(u), v))
        touched.push_back(v);
    }
    std::ranges::sort(touched);
    touched.erase(std::unique(touched.begin(), touched.end()), touched.end());
    const auto sums = touched.empty()
                          ? kept_sums{}
                          : sums_over_kept_edges(touched, frontier, q_values, keys, row_of_vertex);
    const auto columns = weights.row(j);
    const auto row_values = weights.row_values(j);
    for (std::size_t e = 0; e < columns.size(); ++e) {
      const vertex_t v = columns[e];
      const auto at = std::ranges::lower_bound(touched, v);
      if (at == touched.end() || *at != v) {
        indices.push_back(v);
        values.push_back(row_values[e]);
        continue;
      }
      // kernels::add: Q·A's entry, rounded, then Q's own (v in the frontier).
      const auto t = static_cast<std::size_t>(at - touched.begin());
      double total = sums.any[t] ? static_cast<double>(static_cast<float>(sums.sum[t])) : 0.0;
      const auto self = std::ranges::lower_bound(frontier, v);
      const bool in_frontier = self != frontier.end() && *self == v;
      if (in_frontier) total += static_cast<double>(q_values[self - frontier.begin()]);
      if (!sums.any[t] && !in_frontier) continue;
      indices.push_back(v);
      values.push_back(static_cast<float>(total));
    }
    indptr.push_back(static_cast<edge_t>(indices.size()));
  }
  csr_matrix out;
  out.rows = weights.rows;
  out.cols = weights.cols;
  out.indptr = copy_to(std::span<const edge_t>(indptr), host_memory());
  out.indices = copy_to(std::span<const vertex_t>(indices), host_memory());
  out.values = copy_to(std::span<const float>(values), host_memory());
  return out;
}

void drop_excluded_entries(csr_matrix& blocks, const segmented_vertices& destinations,
                           const segmented_vertices& sources,
                           const kernels::excluded_edges& excluded) {
  BULKGNN_EXPECTS(excluded.segments() == destinations.segments(),
                  "layer-wise sampling: {} segments of excluded edges for {} minibatches",
                  excluded.segments(), destinations.segments());
  edge_t kept = 0;
  edge_t first = 0;
  for (std::int64_t j = 0; j < destinations.segments(); ++j) {
    const auto keys = segment_keys(excluded, j);
    const auto source_vertices = sources.segment(j);
    for (auto row = destinations.offsets[j]; row < destinations.offsets[j + 1]; ++row) {
      const vertex_t destination = destinations.vertices[static_cast<std::size_t>(row)];
      const edge_t last = blocks.indptr[row + 1];
      for (edge_t e = first; e < last; ++e) {
        const vertex_t source = source_vertices[static_cast<std::size_t>(blocks.indices[e])];
        if (source != destination && excludes(keys, destination, source)) continue;
        blocks.indices[kept] = blocks.indices[e];
        if (!blocks.values.empty()) blocks.values[kept] = blocks.values[e];
        ++kept;
      }
      first = last;
      blocks.indptr[row + 1] = kept;
    }
  }
  blocks.indices.resize(static_cast<std::size_t>(kept));
  if (!blocks.values.empty()) blocks.values.resize(static_cast<std::size_t>(kept));
}

}  // namespace bulkgnn::sampler::detail
