#include "bulkgnn/kernels/exclude_edges.hpp"

#include <gtest/gtest.h>

#include <random>
#include <set>
#include <tuple>

#include "bulkgnn/core/error.hpp"
#include "test_support.hpp"

namespace bulkgnn::kernels {
namespace {

using testing::cpu_exec;
using testing::reference_exec;

// Two minibatches over a frontier with vertex 1 in both: each leaves out
// only its own edges, and in the direction named.
TEST(ExcludeEdges, EachMinibatchLeavesOutItsOwnEdgesOnly) {
  segmented_vertices frontier;
  frontier.push_segment(std::vector<vertex_t>{1, 2});
  frontier.push_segment(std::vector<vertex_t>{1});
  csr_matrix drawn;
  drawn.rows = 3;
  drawn.cols = 6;
  drawn.indptr = {0, 3, 5, 8};
  drawn.indices = {0, 2, 5, 1, 3, 0, 2, 5};
  drawn.values = {1, 2, 3, 4, 5, 6, 7, 8};
  excluded_edges excluded;
  // Minibatch 0: 2 → 1 and 1 → 2 (an undirected seed edge); minibatch 1: 5 → 1.
  excluded.push_segment({edge_key(1, 2), edge_key(2, 1), edge_key(1, 2)});
  excluded.push_segment({edge_key(1, 5)});
  for (const auto& exec : {reference_exec, cpu_exec}) {
    const auto out = drop_excluded_edges(exec, drawn.view(), frontier, excluded);
    EXPECT_EQ(out.rows, 3);
    EXPECT_EQ(std::vector<edge_t>(out.indptr.begin(), out.indptr.end()),
              (std::vector<edge_t>{0, 2, 3, 5}));
    EXPECT_EQ(std::vector<vertex_t>(out.indices.begin(), out.indices.end()),
              (std::vector<vertex_t>{0, 5, 3, 0, 2}));
    EXPECT_EQ(std::vector<float>(out.values.begin(), out.values.end()),
              (std::vector<float>{1, 3, 5, 6, 7}));
  }
}

// Random bulks: the cpu kernel gives the reference's matrix, and every entry
// left is one its segment does not exclude, every one dropped one it does.
TEST(ExcludeEdges, TheCpuKeepsWhatTheReferenceKeeps) {
  std::mt19937_64 gen(17);
  for (int trial = 0; trial < 20; ++trial) {
    const vertex_t n = 60;
    segmented_vertices frontier;
    std::uniform_int_distribution<vertex_t> vertex(0, n - 1);
    const std::int64_t segments = 1 + trial % 5;
    for (std::int64_t j = 0; j < segments; ++j) {
      std::vector<vertex_t> rows;
      for (int k = 0; k < trial % 7; ++k) rows.push_back(vertex(gen));
      frontier.push_segment(rows);
    }
    auto drawn = testing::random_csr(
        gen,
        {.rows = static_cast<std::int64_t>(frontier.vertices.size()), .cols = n, .mean_degree = 8});
    // About half of each segment's drawn edges excluded, and some edges it
    // did not draw.
    excluded_edges excluded;
    std::bernoulli_distribution coin(0.5);
    for (std::int64_t j = 0; j < segments; ++j) {
      std::vector<std::uint64_t> keys;
      for (std::int64_t i = frontier.offsets[j]; i < frontier.offsets[j + 1]; ++i)
        for (edge_t e = drawn.indptr[i]; e < drawn.indptr[i + 1]; ++e)
          if (coin(gen)) keys.push_back(edge_key(frontier.vertices[i], drawn.indices[e]));
      for (int k = 0; k < 10; ++k) keys.push_back(edge_key(vertex(gen), vertex(gen)));
      excluded.push_segment(keys);
    }
    const auto expected = drop_excluded_edges(reference_exec, drawn.view(), frontier, excluded);
    testing::expect_identical(expected,
                              drop_excluded_edges(cpu_exec, drawn.view(), frontier, excluded));
    for (std::int64_t j = 0; j < segments; ++j) {
      const std::set<std::uint64_t> keys(excluded.keys.begin() + excluded.offsets[j],
                                         excluded.keys.begin() + excluded.offsets[j + 1]);
      for (std::int64_t i = frontier.offsets[j]; i < frontier.offsets[j + 1]; ++i) {
        std::multiset<vertex_t> kept(expected.indices.begin() + expected.indptr[i],
                                     expected.indices.begin() + expected.indptr[i + 1]);
        for (edge_t e = drawn.indptr[i]; e < drawn.indptr[i + 1]; ++e) {
          const bool excluded_edge =
              keys.contains(edge_key(frontier.vertices[i], drawn.indices[e]));
          EXPECT_EQ(kept.contains(drawn.indices[e]), !excluded_edge);
        }
      }
    }
  }
}

TEST(ExcludeEdges, RefusesSegmentsThatDoNotMatchTheFrontier) {
  segmented_vertices frontier;
  frontier.push_segment(std::vector<vertex_t>{0});
  csr_matrix drawn;
  drawn.rows = 1;
  drawn.cols = 2;
  drawn.indptr = {0, 1};
  drawn.indices = {1};
  const excluded_edges none;
  EXPECT_THROW(std::ignore = drop_excluded_edges(cpu_exec, drawn.view(), frontier, none),
               option_error);
  csr_matrix too_few = drawn;
  too_few.rows = 0;
  too_few.indptr = {0};
  too_few.indices.clear();
  excluded_edges one;
  one.push_segment({});
  EXPECT_THROW(std::ignore = drop_excluded_edges(cpu_exec, too_few.view(), frontier, one),
               option_error);
}

}  // namespace
}  // namespace bulkgnn::kernels
