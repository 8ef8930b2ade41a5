// The ShaDow sampler (sampler/shadow/): its vertices are the ones sage's
// draws reach (so their distribution is the node-wise one, which
// node_wise_statistics_test checks with stated power), its blocks are the
// subgraph of A induced on them, trimmed to what the seeds read, and its
// minibatches do not depend on the bulk size, the thread count or the back
// end.
#include "bulkgnn/core/parallel.hpp"
#include "bulkgnn/sampler/bulk_sampler.hpp"

#include "plan_digests.hpp"
#include "split_test_support.hpp"
#include "test_graphs.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <set>
#include <string>
#include <utility>
#include <vector>

namespace bulkgnn::sampler {
namespace {

sampler_options options_of(const std::string& kind, const sampler_options& common) {
  auto o = common;
  o.kind = kind;
  return o;
}

std::vector<minibatch> epoch_minibatches(csr_view g, const sampler_options& options,
                                         const epoch_plan& plan) {
  bulk_sampler sampler(g, options);
  const auto bulk = sampler.sample(plan, 0, plan.num_minibatches());
  std::vector<minibatch> out;
  for (std::int64_t j = 0; j < bulk.count(); ++j) out.push_back(bulk.extract(j));
  return out;
}

// The minibatch of `layers` layers on A[V, V], V = sage's vertices (seeds
// first), untrimmed.
minibatch on_induced_subgraph(csr_view g, const minibatch& sage, std::size_t layers) {
  minibatch full;
  full.index = sage.index;
  full.seeds = sage.seeds;
  full.input_nodes = sage.input_nodes;
  full.blocks = bulkgnn::testing::induced_blocks(g, std::span<const vertex_t>(sage.input_nodes),
                                                 sage.seeds.size(), layers);
  return full;
}

const sampler_options common{.fanouts = {4, 3}, .seed = 6};

TEST(ShadowSampler, ReachesExactlyTheVerticesSageReaches) {
  const auto g = bulkgnn::testing::random_graph(600, 12);
  const epoch_plan plan(bulkgnn::testing::all_vertices(600), 32, 6, 3);
  auto weighted_graph = g;
  weighted_graph.values.resize(g.indices.size());
  for (std::size_t e = 0; e < g.indices.size(); ++e)
    weighted_graph.values[e] = 0.5f + static_cast<float>(e % 7);
  for (const bool weighted : {false, true})
    for (const auto mode : {kernels::replacement::without, kernels::replacement::with}) {
      auto o = common;
      o.weighted = weighted;
      o.replacement = mode;
      const auto graph = weighted ? weighted_graph.view() : g.view();
      const auto shadow = epoch_minibatches(graph, options_of("shadow", o), plan);
      const auto sage = epoch_minibatches(graph, options_of("sage", o), plan);
      ASSERT_EQ(shadow.size(), sage.size());
      for (std::size_t j = 0; j < sage.size(); ++j) {
        EXPECT_EQ(shadow[j].seeds, sage[j].seeds);
        EXPECT_EQ(std::set<vertex_t>(shadow[j].input_nodes.begin(), shadow[j].input_nodes.end()),
                  std::set<vertex_t>(sage[j].input_nodes.begin(), sage[j].input_nodes.end()))
            << "minibatch " << j << (weighted ? " weighted" : "")
            << (mode == kernels::replacement::with ? " with replacement" : "");
      }
    }
}

// Every edge of A among the reached vertices, drawn or not, and nothing
// else, trimmed as restrict_to_seeds trims: the model's outputs at the seeds
// are those of every layer run on the whole induced subgraph.
TEST(ShadowSampler, IsTheModelOnTheInducedSubgraphKeepingWhatTheSeedsRead) {
  const auto g = bulkgnn::testing::random_graph(500, 13);
  const epoch_plan plan(bulkgnn::testing::all_vertices(500), 24, 6, 1);
  // (fanouts, layers): one layer per hop, and the depth apart from the hops.
  const std::vector<std::pair<std::vector<std::int64_t>, std::int64_t>> cases{
      {{4, 3}, 0}, {{3, 2, 2}, 0}, {{4, 3}, 4}, {{3, 2, 2}, 1}};
  for (const auto& [fanouts, layers] : cases) {
    auto o = common;
    o.fanouts = fanouts;
    const auto sage = epoch_minibatches(g.view(), options_of("sage", o), plan);
    o.layers = layers;
    const auto shadow = epoch_minibatches(g.view(), options_of("shadow", o), plan);
    const auto depth = layers == 0 ? fanouts.size() : static_cast<std::size_t>(layers);
    std::int64_t undrawn = 0;
    for (std::size_t j = 0; j < sage.size(); ++j) {
      const auto full = on_induced_subgraph(g.view(), sage[j], depth);
      const auto expected =
          restrict_to_seeds(full, 0, static_cast<std::int64_t>(full.seeds.size()));
      testing::expect_same_minibatch(
          shadow[j], expected,
          "minibatch " + std::to_string(j) + ", " + std::to_string(depth) + " layers");
      undrawn += shadow[j].blocks.back().nnz() - sage[j].blocks.back().nnz();
    }
    EXPECT_GT(undrawn, 0) << "the seeds' layer holds edges that sage did not draw";
  }
}

TEST(ShadowSampler, OnlyASubgraphSamplerTakesADepthApartFromItsHops) {
  const auto g = bulkgnn::testing::random_graph(50, 9);
  auto o = common;
  o.layers = 3;
  bulkgnn::testing::expect_sampler_refuses(g.view(), options_of("sage", o),
                                           "sampler_options.layers 3");
  o.layers = -1;
  bulkgnn::testing::expect_sampler_refuses(g.view(), options_of("shadow", o),
                                           "sampler_options.layers");
  o.layers = 2;  // as many as the hops: the default's minibatches
  const epoch_plan plan(bulkgnn::testing::all_vertices(50), 8, 6, 1);
  EXPECT_EQ(bulkgnn::testing::plan_digests(g.view(), options_of("sage", o), plan, 3),
            bulkgnn::testing::plan_digests(g.view(), options_of("sage", common), plan, 3));
  EXPECT_EQ(bulkgnn::testing::plan_digests(g.view(), options_of("shadow", o), plan, 3),
            bulkgnn::testing::plan_digests(g.view(), options_of("shadow", common), plan, 3));
}

TEST(ShadowSampler, SameMinibatchesForAnyBulkSizeThreadCountAndBackEnd) {
  const auto g = bulkgnn::testing::random_graph(600, 8);
  bulkgnn::testing::expect_same_digests_for_any_bulk_threads_and_back_end(
      g.view(), options_of("shadow", common),
      epoch_plan(bulkgnn::testing::all_vertices(600), 24, 6, 2));
}

}  // namespace
}  // namespace bulkgnn::sampler
