#pragma once

#include "bulkgnn/core/csr.hpp"
#include "bulkgnn/core/segmented.hpp"
#include "bulkgnn/sampler/options.hpp"

#include <cstdint>
#include <span>
#include <vector>

namespace bulkgnn::sampler {

// A clustering of a graph's vertices (Cluster-GCN's METIS parts), as an
// epoch plan batches it (epoch_plan.hpp), with how strongly each pair of
// clusters is linked.
class vertex_clusters {
 public:
  // cluster_of[v] in [0, count) for every vertex v of `graph`.
  vertex_clusters(csr_view graph, std::vector<std::int32_t> cluster_of, int count);

  [[nodiscard]] int count() const { return static_cast<int>(members_.segments()); }
  [[nodiscard]] std::int64_t num_vertices() const {
    return static_cast<std::int64_t>(cluster_of_.size());
  }
  [[nodiscard]] std::int32_t cluster_of(vertex_t v) const { return cluster_of_[v]; }
  // Cluster c's vertices, ascending.
  [[nodiscard]] std::span<const vertex_t> members(int c) const { return members_.segment(c); }
  // Of the clusters that `eligible` marks (by cluster), the one with the most
  // edges to or from c (the lowest id among equals); -1 where c has no edge
  // to any.
  [[nodiscard]] int most_linked(int c, const std::vector<bool>& eligible) const;

 private:
  std::vector<std::int32_t> cluster_of_;
  segmented_vertices members_;
  // Cluster c's linked clusters (ascending) are linked_[link_offsets_[c] ..
  // link_offsets_[c + 1]), with the edges between them, either direction.
  std::vector<std::int64_t> link_offsets_;
  std::vector<std::int32_t> linked_;
  std::vector<std::int64_t> link_edges_;
};

// The clusters a cluster-gcn sampler of `options` cuts a graph of
// `num_vertices` into: its `clusters` parameter, or one per 150 vertices
// where that is 0; option_error where there are more than vertices.
[[nodiscard]] int cluster_count(const sampler_options& options, std::int64_t num_vertices);

}  // namespace bulkgnn::sampler
