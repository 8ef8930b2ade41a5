// LADIES' distribution without a link minibatch's own edges: bit for bit the
// product over the graph that lacks them.
#include "../../sampler/layer_wise/layer_wise_exclusion.hpp"

#include "bulkgnn/kernels/frontier.hpp"
#include "bulkgnn/kernels/spgemm.hpp"
#include "test_graphs.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <set>
#include <vector>

namespace bulkgnn::sampler {
namespace {

const executor host{backend::cpu};

csr_view pattern(csr_view g) {
  g.values = {};
  return g;
}

// `g` without the edges (destination u, source v) that `keys` name.
csr_matrix without_edges(csr_view g, std::span<const std::uint64_t> keys) {
  csr_matrix out;
  out.rows = out.cols = g.rows;
  for (vertex_t u = 0; u < g.rows; ++u) {
    for (const vertex_t v : g.row(u))
      if (!std::ranges::binary_search(keys, kernels::edge_key(u, v))) out.indices.push_back(v);
    out.indptr.push_back(static_cast<edge_t>(out.indices.size()));
  }
  return out;
}

// Row j of `m` alone.
csr_matrix row_of_matrix(csr_view m, std::int64_t j) {
  csr_matrix out;
  out.rows = 1;
  out.cols = m.cols;
  const auto columns = m.row(j);
  const auto values = m.row_values(j);
  out.indices.insert(out.indices.end(), columns.begin(), columns.end());
  out.values.insert(out.values.end(), values.begin(), values.end());
  out.indptr.push_back(static_cast<edge_t>(columns.size()));
  return out;
}

bool same_row(csr_view a, std::int64_t i, csr_view b, std::int64_t j) {
  const auto ca = a.row(i), cb = b.row(j);
  const auto va = a.row_values(i), vb = b.row_values(j);
  return std::ranges::equal(ca, cb) && va.size() == vb.size() &&
         std::memcmp(va.data(), vb.data(), va.size_bytes()) == 0;
}

TEST(LayerWiseExclusion, WeightsAreTheProductOverTheGraphWithoutTheExcludedEdges) {
  const auto g = testing::random_graph(200, 8);
  // Three minibatches' frontiers; each excludes edges into its frontier,
  // edges into other vertices and pairs that are no edges (all ignored but
  // the first kind).
  segmented_vertices frontier;
  kernels::excluded_edges excluded;
  philox_stream rng(rng_key{4, 0, 0, 0, 0});
  for (int j = 0; j < 3; ++j) {
    std::set<vertex_t> vertices;
    while (vertices.size() < 40) vertices.insert(static_cast<vertex_t>(rng.uniform_below(200)));
    const std::vector<vertex_t> sorted(vertices.begin(), vertices.end());
    frontier.push_segment(sorted);
    std::vector<std::uint64_t> keys;
    for (const vertex_t u : sorted)
      for (const vertex_t v : g.view().row(u))
        if (rng.uniform_below(3) == 0) keys.push_back(kernels::edge_key(u, v));
    for (int k = 0; k < 20; ++k)
      keys.push_back(kernels::edge_key(static_cast<vertex_t>(rng.uniform_below(200)),
                                       static_cast<vertex_t>(rng.uniform_below(200))));
    excluded.push_segment(std::move(keys));
  }
  std::set<vertex_t> all(frontier.vertices.begin(), frontier.vertices.end());
  const std::vector<vertex_t> distinct(all.begin(), all.end());
  const csr_matrix q =
      kernels::frontier_selection(host, frontier, distinct, g.view(), distinct, g.rows);
  const csr_matrix weights =
      kernels::add(host, kernels::spgemm(host, q.view(), pattern(g.view())).view(), q.view());
  const csr_matrix kept = detail::weights_without_excluded(weights.view(), q.view(), g.view(),
                                                           distinct, distinct, excluded);
  ASSERT_EQ(kept.rows, 3);
  std::int64_t changed = 0;
  for (std::int64_t j = 0; j < 3; ++j) {
    const auto keys =
        std::span(excluded.keys)
            .subspan(static_cast<std::size_t>(excluded.offsets[j]),
                     static_cast<std::size_t>(excluded.offsets[j + 1] - excluded.offsets[j]));
    auto sorted_keys = std::vector<std::uint64_t>(keys.begin(), keys.end());
    std::ranges::sort(sorted_keys);
    const auto lacking = without_edges(g.view(), sorted_keys);
    const auto q_row = row_of_matrix(q.view(), j);
    const auto expected = kernels::add(
        host, kernels::spgemm(host, q_row.view(), pattern(lacking.view())).view(), q_row.view());
    EXPECT_TRUE(same_row(kept.view(), j, expected.view(), 0)) << "minibatch " << j;
    changed += same_row(weights.view(), j, expected.view(), 0) ? 0 : 1;
  }
  EXPECT_EQ(changed, 3) << "the exclusions must change every minibatch's weights";
}

}  // namespace
}  // namespace bulkgnn::sampler
