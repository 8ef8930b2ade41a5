#include "bulkgnn/sampler/clusters.hpp"

#include "../src/epoch_shuffle.hpp"
#include "../src/kept_arrays.hpp"
#include "bulkgnn/core/error.hpp"
#include "bulkgnn/distributed/partition.hpp"
#include "bulkgnn/sampler/epoch_plan.hpp"

#include <algorithm>
#include <filesystem>
#include <numeric>
#include <span>
#include <utility>

namespace bulkgnn::sampler {

namespace {

segmented_vertices members_of(std::span<const std::int32_t> cluster_of, int count) {
  segmented_vertices members;
  members.offsets.assign(static_cast<std::size_t>(count) + 1, 0);
  for (const auto c : cluster_of) ++members.offsets[c + 1];
  for (int c = 0; c < count; ++c) members.offsets[c + 1] += members.offsets[c];
  members.vertices.resize(cluster_of.size());
  std::vector<std::int64_t> next(members.offsets.begin(), members.offsets.end() - 1);
  for (std::size_t v = 0; v < cluster_of.size(); ++v)
    members.vertices[next[cluster_of[v]]++] = static_cast<vertex_t>(v);
  return members;
}

// Edges between distinct clusters, either direction: links(a, b) ==
// links(b, a) counts the stored edges from a to b and from b to a. Counted
// cluster by cluster, so memory grows with the linked pairs, not the edges.
struct cluster_link {
  std::int32_t from, to;
  std::int64_t edges;
};

std::vector<cluster_link> links_of(csr_view graph, std::span<const std::int32_t> cluster_of,
                                   const segmented_vertices& members) {
  const auto count = members.segments();
  std::vector<cluster_link> links;
  std::vector<std::int64_t> edges_to(static_cast<std::size_t>(count), 0);
  std::vector<std::int32_t> touched;
  for (std::int32_t a = 0; a < count; ++a) {
    for (const vertex_t u : members.segment(a))
      for (edge_t e = graph.indptr[u]; e < graph.indptr[u + 1]; ++e) {
        const auto b = cluster_of[graph.indices[e]];
        if (b == a) continue;
        if (edges_to[b]++ == 0) touched.push_back(b);
      }
    for (const auto b : touched) {
      links.push_back({a, b, edges_to[b]});
      links.push_back({b, a, edges_to[b]});
      edges_to[b] = 0;
    }
    touched.clear();
  }
  std::sort(links.begin(), links.end(), [](const cluster_link& x, const cluster_link& y) {
    return std::pair(x.from, x.to) < std::pair(y.from, y.to);
  });
  // Each pair twice (once from each side): merged.
  std::vector<cluster_link> merged;
  for (const auto& link : links) {
    if (!merged.empty() && merged.back().from == link.from && merged.back().to == link.to)
      merged.back().edges += link.edges;
    else
      merged.push_back(link);
  }
  return merged;
}

// The units an epoch over the clusters shuffles: a cluster holding training
// vertices followed by the clusters without any that go with it; and the
// training vertices of each cluster (ascending).
struct cluster_units {
  std::vector<std::vector<vertex_t>> targets;  // by cluster
  std::vector<std::vector<int>> units;
};

}  // namespace

vertex_clusters::vertex_clusters(csr_view graph, std::vector<std::int32_t> cluster_of, int count)
    : cluster_of_(std::move(cluster_of)) {
  BULKGNN_EXPECTS(count >= 1, "vertex_clusters: {} clusters", count);
  BULKGNN_EXPECTS(std::ssize(cluster_of_) == graph.rows,
                  "vertex_clusters: {} cluster ids for a graph of {} vertices", cluster_of_.size(),
                  graph.rows);
  for (std::size_t v = 0; v < cluster_of_.size(); ++v)
    BULKGNN_EXPECTS(cluster_of_[v] >= 0 && cluster_of_[v] < count,
                    "vertex_clusters: vertex {} is in cluster {}, not in [0, {})", v,
                    cluster_of_[v], count);
  members_ = members_of(cluster_of_, count);
  link_offsets_.assign(static_cast<std::size_t>(count) + 1, 0);
  for (const auto& link : links_of(graph, cluster_of_, members_)) {
    ++link_offsets_[static_cast<std::size_t>(link.from) + 1];
    linked_.push_back(link.to);
    link_edges_.push_back(link.edges);
  }
  std::partial_sum(link_offsets_.begin(), link_offsets_.end(), link_offsets_.begin());
}

int vertex_clusters::most_linked(int c, const std::vector<bool>& eligible) const {
  int best = -1;
  std::int64_t most = 0;
  // Ascending id, so the first of equals stays.
  for (auto i = link_offsets_[c]; i < link_offsets_[c + 1]; ++i) {
    const auto other = linked_[static_cast<std::size_t>(i)];
    if (eligible[other] && link_edges_[static_cast<std::size_t>(i)] > most) {
      best = other;
      most = link_edges_[static_cast<std::size_t>(i)];
    }
  }
  return best;
}

std::vector<bool> vertex_clusters::seeded_clusters(std::span<const vertex_t> train) const {
  std::vector<bool> holds(static_cast<std::size_t>(count()));
  for (const vertex_t v : train) {
    BULKGNN_EXPECTS(v >= 0 && v < num_vertices(),
                    "epoch_plan: seed vertex {} is outside the clustered graph's {} vertices", v,
                    num_vertices());
    holds[cluster_of(v)] = true;
  }
  return holds;
}

std::int64_t vertex_clusters::minibatch_count(std::span<const vertex_t> train,
                                              std::int64_t batch_size) const {
  const auto holds = seeded_clusters(train);
  return sampler::minibatch_count(std::count(holds.begin(), holds.end(), true), batch_size);
}

batched_subgraphs vertex_clusters::batch(std::span<const vertex_t> train, std::int64_t batch_size,
                                         std::uint32_t seed, std::uint32_t epoch) const {
  const std::vector<bool> holds = seeded_clusters(train);
  cluster_units u;
  u.targets.resize(holds.size());
  for (const vertex_t v : train) u.targets[cluster_of(v)].push_back(v);
  std::vector<int> unit_of(u.targets.size(), -1);
  for (std::size_t c = 0; c < u.targets.size(); ++c) {
    auto& t = u.targets[c];
    std::sort(t.begin(), t.end());
    BULKGNN_EXPECTS(std::adjacent_find(t.begin(), t.end()) == t.end(),
                    "epoch_plan: seed vertex {} is listed twice",
                    *std::adjacent_find(t.begin(), t.end()));
    if (holds[c]) {
      unit_of[c] = static_cast<int>(u.units.size());
      u.units.push_back({static_cast<int>(c)});
    }
  }
  int unlinked = 0;
  for (int c = 0; c < count(); ++c) {
    if (holds[c]) continue;
    const int host = most_linked(c, holds);
    const int unit = host >= 0 ? unit_of[host] : unlinked++ % static_cast<int>(u.units.size());
    u.units[unit].push_back(c);
  }
  detail::shuffle_for_epoch(u.units, seed, epoch);
  batched_subgraphs batched;
  std::vector<vertex_t> seeds, vertices;
  for (std::size_t first = 0; first < u.units.size();
       first += static_cast<std::size_t>(batch_size)) {
    const auto last = std::min(u.units.size(), first + static_cast<std::size_t>(batch_size));
    seeds.clear();
    vertices.clear();
    for (std::size_t i = first; i < last; ++i) {
      const auto& targets = u.targets[u.units[i].front()];
      seeds.insert(seeds.end(), targets.begin(), targets.end());
      for (const int c : u.units[i])
        vertices.insert(vertices.end(), members(c).begin(), members(c).end());
    }
    std::sort(vertices.begin(), vertices.end());
    batched.push(seeds, vertices);
  }
  return batched;
}

int cluster_count(const sampler_options& options, std::int64_t num_vertices) {
  constexpr std::int64_t vertices_per_cluster = 150;
  const auto given = parameter(options, "clusters");
  const auto count = given != 0
                         ? given
                         : std::max<std::int64_t>(
                               1, (num_vertices + vertices_per_cluster - 1) / vertices_per_cluster);
  BULKGNN_EXPECTS(count <= num_vertices,
                  "sampler_options: the {} sampler's parameter clusters is {} for a graph of {} "
                  "vertices; give at most one cluster per vertex",
                  options.kind, count, num_vertices);
  return static_cast<int>(count);
}

namespace {

// Bumped when METIS's call or what is kept of it changes.
constexpr std::uint64_t clustering_version = 1;

std::uint64_t clustering_key(csr_view graph, int count, int seed) {
  auto hasher = detail::topology_hasher(graph);
  hasher.add(clustering_version);
  hasher.add(static_cast<std::uint64_t>(count));
  hasher.add(static_cast<std::uint64_t>(seed));
  return hasher.value();
}

}  // namespace

std::filesystem::path cached_clustering_file(csr_view graph, const sampler_options& options) {
  const int count = cluster_count(options, graph.rows);
  return detail::kept_file(
      options.cache_dir, "cluster-gcn",
      clustering_key(graph, count, static_cast<int>(options.seed & 0x7FFFFFFF)));
}

std::shared_ptr<const subgraph_batches> metis_clusters(csr_view graph,
                                                       const sampler_options& options, std::int64_t,
                                                       const executor&) {
  const int count = cluster_count(options, graph.rows);
  const int seed = static_cast<int>(options.seed & 0x7FFFFFFF);
  if (options.cache_dir.empty())
    return std::make_shared<const vertex_clusters>(
        graph, distributed::metis_partition(graph, count, seed).owner, count);
  const auto key = clustering_key(graph, count, seed);
  const auto file = detail::kept_file(options.cache_dir, "cluster-gcn", key);
  std::vector<std::int32_t> cluster_of(static_cast<std::size_t>(graph.rows));
  const std::span<std::byte> into[] = {std::as_writable_bytes(std::span(cluster_of))};
  if (detail::read_kept(file, key, into) &&
      std::ranges::all_of(cluster_of, [&](std::int32_t c) { return c >= 0 && c < count; }))
    return std::make_shared<const vertex_clusters>(graph, std::move(cluster_of), count);
  cluster_of = distributed::metis_partition(graph, count, seed).owner;
  const std::span<const std::byte> arrays[] = {std::as_bytes(std::span(cluster_of))};
  detail::write_kept(file, key, arrays);
  return std::make_shared<const vertex_clusters>(graph, std::move(cluster_of), count);
}

}  // namespace bulkgnn::sampler
