#include "bulkgnn/distributed/partition.hpp"

#include "../sampler/test_graphs.hpp"
#include "bulkgnn/core/error.hpp"
#include "bulkgnn/core/rng.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <numeric>

namespace bulkgnn::distributed {
namespace {

// k dense clusters of `size` vertices with a few edges between clusters,
// vertex ids interleaved so that block ranges cut almost every edge.
csr_matrix clustered_graph(int clusters, vertex_t size, std::uint32_t seed) {
  const vertex_t n = clusters * size;
  philox_stream rng(rng_key{seed, 1, 2, 3, 4});
  std::vector<std::vector<vertex_t>> rows(n);
  for (vertex_t v = 0; v < n; ++v)
    for (int e = 0; e < 8; ++e) {
      const bool across = rng.uniform_below(20) == 0;
      const auto c =
          across ? rng.uniform_below(clusters) : static_cast<std::uint32_t>(v % clusters);
      const auto u = static_cast<vertex_t>(rng.uniform_below(size) * clusters + c);
      if (u != v) {
        rows[v].push_back(u);
        rows[u].push_back(v);
      }
    }
  csr_matrix g;
  g.rows = g.cols = n;
  for (auto& r : rows) {
    std::sort(r.begin(), r.end());
    r.erase(std::unique(r.begin(), r.end()), r.end());
    g.indices.insert(g.indices.end(), r.begin(), r.end());
    g.indptr.push_back(static_cast<edge_t>(g.indices.size()));
  }
  return g;
}

void expect_consistent(const vertex_partition& p, std::int64_t n) {
  ASSERT_EQ(p.num_vertices(), n);
  ASSERT_EQ(static_cast<int>(p.part_offsets.size()), p.parts + 1);
  EXPECT_EQ(p.part_offsets.back(), n);
  std::vector<vertex_t> seen(p.old_id.begin(), p.old_id.end());
  std::sort(seen.begin(), seen.end());
  for (vertex_t v = 0; v < n; ++v) ASSERT_EQ(seen[v], v) << "old_id is not a permutation";
  for (vertex_t v = 0; v < n; ++v) {
    EXPECT_EQ(p.old_id[p.new_id(v)], v);
    EXPECT_GE(p.new_id(v), p.part_offsets[p.owner[v]]);
    EXPECT_LT(p.new_id(v), p.part_offsets[p.owner[v] + 1]);
  }
}

TEST(PartitionFromOwners, MapsByVertexAloneAreTheBothWayMapsWithoutOldIds) {
  const std::vector<std::int32_t> owner{2, 0, 1, 0, 2, 2, 1, 0};
  const auto both = partition_from_owners(owner, 3);
  expect_consistent(both, 8);
  const auto by_vertex = partition_from_owners(owner, 3, relabelling::by_vertex);
  EXPECT_TRUE(by_vertex.old_id.empty());
  EXPECT_EQ(by_vertex.owner, both.owner);
  EXPECT_EQ(by_vertex.local_index, both.local_index);
  EXPECT_EQ(by_vertex.part_offsets, both.part_offsets);
}

TEST(BlockPartition, ContiguousNearlyEqualRangesInOrder) {
  const auto p = block_partition(10, 3);
  expect_consistent(p, 10);
  EXPECT_EQ(p.owner, (std::vector<std::int32_t>{0, 0, 0, 0, 1, 1, 1, 1, 2, 2}));
  for (vertex_t v = 0; v < 10; ++v) EXPECT_EQ(p.new_id(v), v);
}

TEST(BlockPartition, MorePartsThanVerticesLeavesEmptyParts) {
  const auto p = block_partition(2, 4);
  expect_consistent(p, 2);
  EXPECT_EQ(p.part_size(2), 0);
}

TEST(MetisPartition, CutsFarFewerEdgesThanBlocksOnAClusteredGraph) {
  const auto g = clustered_graph(4, 250, 3);
  const auto blocks = block_partition(g.rows, 4);
  const auto metis = metis_partition(g.view(), 4, 0);
  expect_consistent(metis, g.rows);
  const auto block_cut = edge_cut(g.view(), blocks);
  const auto metis_cut = edge_cut(g.view(), metis);
  EXPECT_LT(metis_cut * 4, block_cut) << "metis " << metis_cut << " block " << block_cut;
  for (int q = 0; q < 4; ++q) {
    EXPECT_GT(metis.part_size(q), 200);
    EXPECT_LT(metis.part_size(q), 300);
  }
  // Deterministic: every rank computes the same partition.
  EXPECT_EQ(metis_partition(g.view(), 4, 0).owner, metis.owner);
}

TEST(EdgeCut, CountsStoredEntriesAcrossParts) {
  const auto g = testing::random_graph(300, 2);
  const auto p = block_partition(g.rows, 3);
  edge_t expected = 0;
  for (vertex_t u = 0; u < 300; ++u)
    for (const auto v : g.view().row(u)) expected += (u / 100) != (v / 100);
  EXPECT_EQ(edge_cut(g.view(), p), expected);
  EXPECT_EQ(edge_cut(g.view(), block_partition(g.rows, 1)), 0);
}

TEST(MakePartition, RejectsUnknownMethods) {
  const auto g = testing::random_graph(10, 2);
  EXPECT_THROW(std::ignore = make_partition("random", g.view(), 2, 0), option_error);
}

}  // namespace
}  // namespace bulkgnn::distributed
