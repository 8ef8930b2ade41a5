#pragma once

#include "bulkgnn/core/csr.hpp"
#include "bulkgnn/core/executor.hpp"
#include "bulkgnn/core/segmented.hpp"
#include "bulkgnn/sampler/options.hpp"
#include "bulkgnn/sampler/subgraph_batches.hpp"

#include <cstdint>
#include <filesystem>
#include <memory>
#include <span>
#include <vector>

namespace bulkgnn::sampler {

// A clustering of a graph's vertices (Cluster-GCN's METIS parts), with how
// strongly each pair of clusters is linked, and how an epoch batches it:
// the clusters holding training vertices are shuffled and cut into batches
// of batch_size; a minibatch's seeds are the training vertices of its
// clusters, and it runs on all of its clusters' vertices. A cluster without
// training vertices goes with the cluster holding some that it has the most
// edges to (one linked to none of them goes round-robin over them, and its
// vertices then feed no seed), so that every vertex is in one minibatch per
// epoch and no minibatch is without seeds.
class vertex_clusters final : public subgraph_batches {
 public:
  // cluster_of[v] in [0, count) for every vertex v of `graph`.
  vertex_clusters(csr_view graph, std::vector<std::int32_t> cluster_of, int count);

  [[nodiscard]] int count() const { return static_cast<int>(members_.segments()); }
  [[nodiscard]] std::int64_t num_vertices() const override {
    return static_cast<std::int64_t>(cluster_of_.size());
  }
  // Batches of batch_size clusters holding training vertices.
  [[nodiscard]] std::int64_t minibatch_count(std::span<const vertex_t> train,
                                             std::int64_t batch_size) const override;
  [[nodiscard]] batched_subgraphs batch(std::span<const vertex_t> train, std::int64_t batch_size,
                                        std::uint32_t seed, std::uint32_t epoch) const override;
  [[nodiscard]] std::int32_t cluster_of(vertex_t v) const { return cluster_of_[v]; }
  // Cluster c's vertices, ascending.
  [[nodiscard]] std::span<const vertex_t> members(int c) const { return members_.segment(c); }
  // Of the clusters that `eligible` marks (by cluster), the one with the most
  // edges to or from c (the lowest id among equals); -1 where c has no edge
  // to any.
  [[nodiscard]] int most_linked(int c, const std::vector<bool>& eligible) const;

 private:
  // Which clusters hold a training vertex.
  [[nodiscard]] std::vector<bool> seeded_clusters(std::span<const vertex_t> train) const;

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

// Cluster-GCN's batching of `graph` (held whole on the host): its METIS
// clusters, cluster_count of them, METIS seeded by the sampler's seed (any
// batch_size of clusters). With options.cache_dir, the clustering is read
// from cached_clustering_file where a whole one for this graph, count and
// seed is there, else made and kept there (written aside, then renamed).
// Where options.cache_dir keeps the clustering of `graph` that `options` ask
// for: a file named after a hash of the graph's topology, the cluster count
// and the seed.
[[nodiscard]] std::filesystem::path cached_clustering_file(csr_view graph,
                                                           const sampler_options& options);

[[nodiscard]] std::shared_ptr<const subgraph_batches> metis_clusters(csr_view graph,
                                                                     const sampler_options& options,
                                                                     std::int64_t batch_size,
                                                                     const executor& exec);

}  // namespace bulkgnn::sampler
