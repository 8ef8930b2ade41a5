// Cluster-GCN (sampler/cluster/): the clustered epoch plan is a uniformly
// random partition of the clusters into batches, each vertex in one
// minibatch per epoch (tested with stated power); the sampler's blocks are
// the subgraph induced on a minibatch's clusters, trimmed to what its seeds
// read; and its minibatches do not depend on the bulk size, the thread
// count, the back end or the slices that data-parallel ranks sample.
#include "bulkgnn/core/error.hpp"
#include "bulkgnn/sampler/bulk_sampler.hpp"
#include "bulkgnn/sampler/clusters.hpp"

#include "../support/statistics.hpp"
#include "plan_digests.hpp"
#include "split_test_support.hpp"
#include "test_graphs.hpp"

#include <gtest/gtest.h>

#include "scratch_dir.hpp"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <set>
#include <string>
#include <vector>

namespace bulkgnn::sampler {
namespace {

// Vertex v in cluster (v · 7) mod count: clusters spread over the graph.
vertex_clusters spread_clusters(csr_view g, int count) {
  std::vector<std::int32_t> cluster_of(static_cast<std::size_t>(g.rows));
  for (vertex_t v = 0; v < g.rows; ++v) cluster_of[v] = static_cast<std::int32_t>((v * 7) % count);
  return {g, std::move(cluster_of), count};
}

// A plan's batching that the test keeps alive.
std::shared_ptr<const subgraph_batches> batching_of(const vertex_clusters& clusters) {
  return {&clusters, [](const subgraph_batches*) {}};
}

// Every vertex but every fourth, and none of clusters 3, 11 and 17.
std::vector<vertex_t> training_vertices(const vertex_clusters& clusters) {
  std::vector<vertex_t> train;
  for (vertex_t v = 0; v < clusters.num_vertices(); ++v) {
    const auto c = clusters.cluster_of(v);
    if (v % 4 != 0 && c != 3 && c != 11 && c != 17) train.push_back(v);
  }
  return train;
}

const sampler_options cluster_gcn{.kind = "cluster-gcn", .fanouts = {-1, -1}, .seed = 4};

TEST(VertexClusters, ListMembersAndTheMostLinkedEligibleCluster) {
  // Clusters {0, 1}, {2, 3}, {4, 5}; edges 0-2, 1-3, 1-4 stored both ways,
  // 5 -> 0 one way: links(0, 1) = 4, links(0, 2) = 3.
  csr_matrix g;
  g.rows = g.cols = 6;
  g.indptr = {0, 1, 3, 4, 5, 6, 7};
  g.indices = {2, 3, 4, 0, 1, 1, 0};
  const vertex_clusters clusters(g.view(), {0, 0, 1, 1, 2, 2}, 3);
  ASSERT_EQ(clusters.count(), 3);
  EXPECT_EQ(std::vector<vertex_t>(clusters.members(2).begin(), clusters.members(2).end()),
            (std::vector<vertex_t>{4, 5}));
  EXPECT_EQ(clusters.cluster_of(3), 1);
  EXPECT_EQ(clusters.most_linked(0, {false, true, true}), 1);
  EXPECT_EQ(clusters.most_linked(0, {false, false, true}), 2);
  EXPECT_EQ(clusters.most_linked(1, {false, false, true}), -1);
  EXPECT_EQ(clusters.most_linked(2, {true, true, false}), 0);
}

TEST(ClusteredPlan, HoldsEveryVertexOnceAndEverySeedWithItsCluster) {
  const auto g = bulkgnn::testing::random_graph(600, 21);
  const auto clusters = spread_clusters(g.view(), 30);
  const auto train = training_vertices(clusters);
  const std::int64_t per_batch = 4;
  std::vector<bool> holds(30, false);
  for (const vertex_t v : train) holds[clusters.cluster_of(v)] = true;
  for (std::uint32_t epoch = 0; epoch < 6; ++epoch) {
    const epoch_plan plan(train, per_batch, 9, epoch, batching_of(clusters));
    ASSERT_NE(plan.batching(), nullptr);
    ASSERT_EQ(plan.num_minibatches(), 7);  // 27 clusters hold seeds
    EXPECT_EQ(minibatch_count(train, per_batch, &clusters), 7);
    std::multiset<vertex_t> seeds;
    std::multiset<vertex_t> vertices;
    for (std::int64_t j = 0; j < plan.num_minibatches(); ++j) {
      const auto sub = plan.subgraph(j);
      ASSERT_TRUE(std::is_sorted(sub.begin(), sub.end()));
      std::set<int> in_batch;
      for (const vertex_t v : sub) in_batch.insert(clusters.cluster_of(v));
      std::int64_t whole = 0;
      int holding = 0;
      for (const int c : in_batch) {
        whole += std::ssize(clusters.members(c));
        holding += holds[c] ? 1 : 0;
        // A cluster without seeds goes with the one holding seeds that it
        // is most linked to.
        if (!holds[c]) {
          EXPECT_TRUE(in_batch.contains(clusters.most_linked(c, holds))) << c;
        }
      }
      EXPECT_EQ(whole, std::ssize(sub)) << "minibatch " << j << " holds whole clusters";
      EXPECT_EQ(holding, j + 1 < plan.num_minibatches() ? per_batch : 3) << "minibatch " << j;
      std::vector<vertex_t> expected_seeds;
      for (const vertex_t v : train)
        if (std::binary_search(sub.begin(), sub.end(), v)) expected_seeds.push_back(v);
      std::vector<vertex_t> mine(plan.seeds(j).begin(), plan.seeds(j).end());
      std::sort(mine.begin(), mine.end());
      EXPECT_EQ(mine, expected_seeds) << "minibatch " << j << ": the seeds of its clusters";
      seeds.insert(mine.begin(), mine.end());
      vertices.insert(sub.begin(), sub.end());
    }
    EXPECT_EQ(seeds, std::multiset<vertex_t>(train.begin(), train.end()));
    const auto all = bulkgnn::testing::all_vertices(600);
    EXPECT_EQ(vertices, std::multiset<vertex_t>(all.begin(), all.end()));
  }
}

// With U clusters shuffled and cut into batches of q, two given clusters
// share a batch with probability (q - 1) / (U - 1), and a cluster is in each
// batch with probability q / U, independently from epoch to epoch. Each
// pair's and each (cluster, batch) cell's count over the epochs is tested at
// a family-wise alpha of 1e-4, with power >= 0.99 against a 5% bias of any
// one cell.
TEST(ClusteredPlan, BatchesAreAUniformlyRandomPartitionOfTheClusters) {
  constexpr int units = 12;
  constexpr std::int64_t per_batch = 3;
  constexpr int batches = units / per_batch;
  constexpr int epochs = 150'000;
  const auto g = bulkgnn::testing::random_graph(units * 4, 5);
  std::vector<std::int32_t> cluster_of(static_cast<std::size_t>(g.rows));
  for (vertex_t v = 0; v < g.rows; ++v) cluster_of[v] = static_cast<std::int32_t>(v % units);
  const vertex_clusters clusters(g.view(), cluster_of, units);
  const auto train = bulkgnn::testing::all_vertices(static_cast<vertex_t>(g.rows));

  const double pair_p = static_cast<double>(per_batch - 1) / (units - 1);
  const double batch_p = 1.0 / batches;
  const bulkgnn::testing::count_test_family pairs{.cells = units * (units - 1) / 2};
  const bulkgnn::testing::count_test_family positions{.cells = units * batches};
  ASSERT_GE(pairs.least_power(epochs, {pair_p}, 0.05), bulkgnn::testing::required_power);
  ASSERT_GE(positions.least_power(epochs, {batch_p}, 0.05), bulkgnn::testing::required_power);

  std::vector<double> together(pairs.cells, 0);
  std::vector<double> in_batch(positions.cells, 0);
  std::vector<int> batch_of(units);
  for (std::uint32_t epoch = 0; epoch < epochs; ++epoch) {
    const epoch_plan plan(train, per_batch, 17, epoch, batching_of(clusters));
    ASSERT_EQ(plan.num_minibatches(), batches);
    for (int b = 0; b < batches; ++b)
      for (const vertex_t v : plan.subgraph(b)) batch_of[cluster_of[v]] = b;
    std::size_t cell = 0;
    for (int a = 0; a < units; ++a) {
      in_batch[static_cast<std::size_t>(a * batches + batch_of[a])] += 1;
      for (int b = a + 1; b < units; ++b) together[cell++] += batch_of[a] == batch_of[b] ? 1 : 0;
    }
  }
  const auto pair_verdict = pairs.test(together, std::vector<double>(pairs.cells, pair_p), epochs);
  EXPECT_FALSE(pair_verdict.rejected)
      << "pair cell " << pair_verdict.worst << " at z " << pair_verdict.worst_z;
  const auto position_verdict =
      positions.test(in_batch, std::vector<double>(positions.cells, batch_p), epochs);
  EXPECT_FALSE(position_verdict.rejected)
      << "(cluster, batch) cell " << position_verdict.worst << " at z " << position_verdict.worst_z;
}

// The minibatch with every layer on A[V, V], V = the seeds and then the
// rest of the minibatch's clusters ascending, trimmed to what the seeds read.
minibatch on_clusters(csr_view g, const epoch_plan& plan, std::int64_t j, std::size_t layers) {
  const auto full = bulkgnn::testing::planned_subgraph_model(g, plan, j, layers);
  return restrict_to_seeds(full, 0, std::ssize(full.seeds));
}

TEST(ClusterGcnSampler, IsTheModelOnTheSubgraphOfItsClustersKeepingWhatTheSeedsRead) {
  const auto g = bulkgnn::testing::random_graph(500, 13);
  const auto clusters = spread_clusters(g.view(), 30);
  const auto train = training_vertices(clusters);
  const epoch_plan plan(train, 3, 4, 2, batching_of(clusters));
  for (const std::size_t layers : {1, 2, 3}) {
    auto o = cluster_gcn;
    o.fanouts.assign(layers, -1);
    bulk_sampler sampler(g.view(), o);
    const auto bulk = sampler.sample(plan, 0, plan.num_minibatches());
    std::int64_t between_clusters = 0;
    for (std::int64_t j = 0; j < bulk.count(); ++j) {
      const auto mb = bulk.extract(j);
      testing::expect_same_minibatch(
          mb, on_clusters(g.view(), plan, j, layers),
          "minibatch " + std::to_string(j) + ", " + std::to_string(layers) + " layers");
      const auto& seeds_block = mb.blocks.back();
      for (std::int64_t r = 0; r < seeds_block.rows; ++r)
        for (edge_t e = seeds_block.indptr[r]; e < seeds_block.indptr[r + 1]; ++e)
          between_clusters += clusters.cluster_of(mb.input_nodes[seeds_block.indices[e]]) !=
                              clusters.cluster_of(mb.seeds[r]);
    }
    EXPECT_GT(between_clusters, 0) << "edges between a minibatch's clusters are kept";
  }
}

TEST(ClusterGcnSampler, SameMinibatchesForAnyBulkSizeThreadCountAndBackEnd) {
  const auto g = bulkgnn::testing::random_graph(600, 8);
  const auto clusters = spread_clusters(g.view(), 40);
  bulkgnn::testing::expect_same_digests_for_any_bulk_threads_and_back_end(
      g.view(), cluster_gcn,
      epoch_plan(training_vertices(clusters), 3, 4, 2, batching_of(clusters)));
}

TEST(ClusterGcnSampler, EverySliceIsTheWholeMinibatchRestrictedToItsSeeds) {
  const auto g = bulkgnn::testing::random_graph(500, 3);
  const auto clusters = spread_clusters(g.view(), 30);
  const epoch_plan plan(training_vertices(clusters), 4, 0, 1, batching_of(clusters));
  bulk_sampler sampler(g.view(), cluster_gcn);
  const auto whole = sampler.sample(plan, 0, plan.num_minibatches());
  for (const int slices : {2, 3}) {
    for (int slice = 0; slice < slices; ++slice) {
      const auto parts = sampler.sample_slices(plan, 0, plan.num_minibatches(),
                                               {.slice = slice, .slices = slices});
      for (std::int64_t j = 0; j < whole.count(); ++j) {
        const auto all = whole.extract(j);
        const auto [begin, end] = slice_range(std::ssize(all.seeds), slice, slices);
        testing::expect_same_minibatch(
            parts.extract(j), restrict_to_seeds(all, begin, end),
            "slice " + std::to_string(slice) + " of " + std::to_string(slices));
      }
    }
  }
}

TEST(ClusterGcnSampler, RefusesWhatItCannotDo) {
  const auto g = bulkgnn::testing::random_graph(60, 9);
  auto o = cluster_gcn;
  o.fanouts = {5, -1};
  bulkgnn::testing::expect_sampler_refuses(g.view(), o, "give -1 per layer");
  bulk_sampler sampler(g.view(), cluster_gcn);
  // Seeds alone say nothing of the clusters a minibatch runs on.
  EXPECT_THROW((void)sampler.sample(epoch_plan(bulkgnn::testing::all_vertices(60), 8, 1, 0), 0, 1),
               option_error);
  const std::vector<vertex_t> twice{3, 4, 3};
  const auto clusters = spread_clusters(g.view(), 6);
  EXPECT_THROW(epoch_plan(twice, 2, 1, 0, batching_of(clusters)), option_error);
  EXPECT_THROW(vertex_clusters(g.view(), std::vector<std::int32_t>(60, 6), 6), option_error);
  EXPECT_THROW(vertex_clusters(g.view(), std::vector<std::int32_t>(59, 0), 6), option_error);
  o = cluster_gcn;
  o.parameters["clusters"] = 61;
  EXPECT_THROW((void)cluster_count(o, 60), option_error);
  o.parameters["clusters"] = 0;
  EXPECT_EQ(cluster_count(o, 301), 3);
}

// The clusters of a run with options.cache_dir, as the clustering its
// vertices are in.
std::vector<std::int32_t> cluster_ids(csr_view g, const sampler_options& options) {
  const auto batching = metis_clusters(g, options, 4, executor{});
  const auto& clusters = dynamic_cast<const vertex_clusters&>(*batching);
  std::vector<std::int32_t> ids;
  for (vertex_t v = 0; v < g.rows; ++v) ids.push_back(clusters.cluster_of(v));
  return ids;
}

// The first run keeps its METIS clustering; a later one reads what is kept
// (shown by planting another clustering there), and one cut short or made
// for another graph is made again and kept whole.
TEST(ClusterGcnCache, AClusteringIsKeptReadBackAndRemadeWhenBroken) {
  const bulkgnn::testing::scratch_dir dir;
  const auto g = bulkgnn::testing::random_graph(600, 3);
  sampler_options options{
      .kind = "cluster-gcn", .fanouts = {-1, -1}, .seed = 2, .parameters = {{"clusters", 12}}};
  const auto metis = cluster_ids(g.view(), options);
  options.cache_dir = (dir / "cache").string();
  const auto file = cached_clustering_file(g.view(), options);
  EXPECT_EQ(file.parent_path(), dir / "cache");
  EXPECT_EQ(cluster_ids(g.view(), options), metis);
  ASSERT_TRUE(std::filesystem::exists(file));
  const auto bytes = std::filesystem::file_size(file);
  const auto header_bytes = bytes - 600 * sizeof(std::int32_t);

  std::string header(header_bytes, '\0');
  std::ifstream(file, std::ios::binary)
      .read(header.data(), static_cast<std::streamsize>(header_bytes));
  std::vector<std::int32_t> planted(600);
  for (std::size_t v = 0; v < planted.size(); ++v) planted[v] = static_cast<std::int32_t>(v % 12);
  {
    std::ofstream out(file, std::ios::binary | std::ios::trunc);
    out.write(header.data(), static_cast<std::streamsize>(header.size()));
    out.write(reinterpret_cast<const char*>(planted.data()),
              static_cast<std::streamsize>(planted.size() * sizeof(std::int32_t)));
  }
  EXPECT_EQ(cluster_ids(g.view(), options), planted);

  std::filesystem::resize_file(file, bytes - 8);
  EXPECT_EQ(cluster_ids(g.view(), options), metis);
  EXPECT_EQ(std::filesystem::file_size(file), bytes);

  auto other_seed = options;
  other_seed.seed = 3;
  EXPECT_NE(cached_clustering_file(g.view(), other_seed), file);
  auto other_count = options;
  other_count.parameters["clusters"] = 13;
  EXPECT_NE(cached_clustering_file(g.view(), other_count), file);
  const auto other_graph = bulkgnn::testing::random_graph(600, 4);
  EXPECT_NE(cached_clustering_file(other_graph.view(), options), file);
  for (const auto& entry : std::filesystem::directory_iterator(dir / "cache"))
    EXPECT_EQ(entry.path(), file) << "a temporary file was left behind";
}

TEST(ClusterGcnCache, SamplersWithNothingToKeepRefuseACacheByName) {
  const auto g = bulkgnn::testing::random_graph(100, 3);
  bulkgnn::testing::expect_sampler_refuses(
      g.view(), {.kind = "sage", .fanouts = {5}, .cache_dir = "/tmp/unused"},
      "sampler_options.cache_dir does not apply to the sage sampler");
}

}  // namespace
}  // namespace bulkgnn::sampler
