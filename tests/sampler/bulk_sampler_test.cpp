#include "bulkgnn/sampler/bulk_sampler.hpp"

#include "bulkgnn/core/error.hpp"
#include "bulkgnn/core/parallel.hpp"
#include "bulkgnn/kernels/gather_rows.hpp"
#include "fake_device_memory.hpp"
#include "plan_digests.hpp"
#include "test_graphs.hpp"

#include <gtest/gtest.h>

#include <numeric>
#include <set>

namespace bulkgnn::sampler {
namespace {

using testing::all_vertices;
using testing::has_edge;
using testing::random_graph;

// The digests of every minibatch of one epoch, sampled `bulk` at a time.
std::vector<std::uint64_t> epoch_digests(csr_view graph, const sampler_options& options,
                                         std::int64_t batch_size, std::int64_t bulk,
                                         backend backend = backend::cpu) {
  const auto train = all_vertices(static_cast<vertex_t>(graph.rows));
  // The plan's seed stays fixed so that tests varying options.seed see the
  // sampler's own use of it, not a reshuffled epoch.
  return testing::plan_digests(graph, options, epoch_plan(train, batch_size, 0, 3), bulk, backend);
}

sampler_options options_for(const std::string& kind) {
  if (kind == "sage") return {.kind = kind, .fanouts = {5, 3, -1}, .seed = 11};
  return {.kind = kind, .fanouts = {40, 30}, .seed = 11};
}

class EveryKind : public ::testing::TestWithParam<std::string> {};

INSTANTIATE_TEST_SUITE_P(Samplers, EveryKind,
                         ::testing::Values(std::string("sage"), std::string("ladies"),
                                           std::string("fastgcn")),
                         [](const auto& info) { return info.param; });

TEST_P(EveryKind, SameMinibatchesForAnyBulkSize) {
  const auto g = random_graph(700, 1);
  const auto options = options_for(GetParam());
  const auto reference = epoch_digests(g.view(), options, 16, 1);
  EXPECT_EQ(epoch_digests(g.view(), options, 16, 7), reference);
  EXPECT_EQ(epoch_digests(g.view(), options, 16, 64), reference);
}

TEST_P(EveryKind, SameMinibatchesForAnyThreadCount) {
  const auto g = random_graph(700, 2);
  const auto options = options_for(GetParam());
  std::vector<std::uint64_t> one;
  {
    const thread_limit limit(1);
    one = epoch_digests(g.view(), options, 32, 8);
  }
  // Odd counts split the rows unevenly, on any machine (TBB allows more
  // threads than cores).
  for (const int threads : {2, 3, 5}) {
    const thread_limit limit(threads);
    EXPECT_EQ(epoch_digests(g.view(), options, 32, 8), one) << threads << " threads";
  }
}

TEST_P(EveryKind, CpuBackendMatchesTheReferenceBackend) {
  const auto g = random_graph(500, 3);
  const auto options = options_for(GetParam());
  EXPECT_EQ(epoch_digests(g.view(), options, 32, 5, backend::cpu),
            epoch_digests(g.view(), options, 32, 5, backend::reference));
}

TEST_P(EveryKind, DifferentSeedsGiveDifferentMinibatches) {
  const auto g = random_graph(500, 4);
  auto options = options_for(GetParam());
  const auto first = epoch_digests(g.view(), options, 32, 4);
  options.seed += 1;
  EXPECT_NE(epoch_digests(g.view(), options, 32, 4), first);
}

// Checks an extracted minibatch in the DGL layout: block i's destinations are
// block i+1's sources, the last block's destinations are the seeds, the input
// nodes are distinct, and every entry of the input-most block is an edge of A
// (or a self loop, for the layer-wise samplers).
void expect_well_formed(const minibatch& mb, csr_view graph, bool self_loops) {
  ASSERT_FALSE(mb.blocks.empty());
  for (std::size_t i = 0; i < mb.blocks.size(); ++i) {
    const auto& block = mb.blocks[i];
    ASSERT_EQ(find_csr_problem(block.view()), "");
    ASSERT_LE(block.rows, block.cols);
    const auto next_sources = i + 1 < mb.blocks.size() ? mb.blocks[i + 1].cols
                                                       : static_cast<std::int64_t>(mb.seeds.size());
    EXPECT_EQ(block.rows, next_sources);
  }
  EXPECT_TRUE(std::equal(mb.seeds.begin(), mb.seeds.end(), mb.input_nodes.begin()));
  const std::set<vertex_t> distinct(mb.input_nodes.begin(), mb.input_nodes.end());
  EXPECT_EQ(distinct.size(), mb.input_nodes.size()) << "duplicate source vertices";
  EXPECT_EQ(static_cast<std::int64_t>(mb.input_nodes.size()), mb.blocks.front().cols);
  // Destinations first at every hop makes every block's sources a prefix of
  // the input nodes, so input_nodes maps any block's local ids to global ids.
  for (const auto& block : mb.blocks) {
    for (std::int64_t r = 0; r < block.rows; ++r) {
      const vertex_t dst = mb.input_nodes[r];
      for (auto e = block.indptr[r]; e < block.indptr[r + 1]; ++e) {
        const vertex_t src = mb.input_nodes[block.indices[e]];
        EXPECT_TRUE(has_edge(graph, dst, src) || (self_loops && src == dst))
            << "sampled edge " << src << " -> " << dst << " is not in the graph";
      }
    }
  }
}

TEST_P(EveryKind, BlocksAreWellFormedAndDestinationsComeFirst) {
  const auto g = random_graph(600, 5);
  const auto options = options_for(GetParam());
  const auto train = all_vertices(600);
  const epoch_plan plan(train, 50, 0, 0);
  bulk_sampler sampler(g.view(), options);
  const auto bulk = sampler.sample(plan, 0, plan.num_minibatches());
  for (std::int64_t j = 0; j < bulk.count(); ++j) {
    const auto mb = bulk.extract(j);
    expect_well_formed(mb, g.view(), GetParam() != "sage");
    // Per hop: the destinations are the first sources, sources are distinct,
    // and each block entry is a graph edge between global ids.
    const segmented_vertices* destinations = &bulk.seeds;
    for (const auto& layer : bulk.layers) {
      const auto dst = destinations->segment(j);
      const auto src = layer.sources.segment(j);
      ASSERT_GE(src.size(), dst.size());
      EXPECT_TRUE(std::equal(dst.begin(), dst.end(), src.begin()));
      EXPECT_EQ(std::set<vertex_t>(src.begin(), src.end()).size(), src.size());
      destinations = &layer.sources;
    }
  }
}

// A sampler whose entry says host_only (PinSAGE, the subgraph samplers) is refused on a
// GPU executor by name before it is made; the others are made there.
TEST(SamplerTable, HostOnlySamplersRefuseAGpuExecutorByName) {
  const auto g = random_graph(50, 9);
  std::size_t host_only = 0;
  for (const auto& entry : sampler_table()) {
    if (!entry.host_only) continue;
    ++host_only;
    const sampler_options options{.kind = std::string(entry.name),
                                  .fanouts = {entry.batches_subgraphs() ? -1 : 3}};
    try {
      bulk_sampler sampler(g.view(), options,
                           executor(std::make_shared<testing::fake_device_context>()));
      ADD_FAILURE() << entry.name << " accepted a GPU executor";
    } catch (const option_error& e) {
      const std::string what = e.what();
      EXPECT_NE(what.find("no GPU kernel"), std::string::npos) << what;
      EXPECT_NE(what.find(std::string(entry.name)), std::string::npos) << what;
    }
  }
  EXPECT_GE(host_only, 2u) << "pinsage and shadow are host only";
}

TEST(NodeWiseSampler, DrawsMinOfFanoutAndDegreeNeighboursPerDestination) {
  const auto g = random_graph(600, 6);
  const sampler_options options{.fanouts = {4, 2}, .seed = 1};
  const auto train = all_vertices(600);
  const epoch_plan plan(train, 64, 0, 0);
  bulk_sampler sampler(g.view(), options);
  const auto bulk = sampler.sample(plan, 0, plan.num_minibatches());
  for (std::size_t hop = 0; hop < bulk.layers.size(); ++hop) {
    const auto& layer = bulk.layers[hop];
    const segmented_vertices& destinations = hop == 0 ? bulk.seeds : bulk.layers[hop - 1].sources;
    for (std::size_t r = 0; r < destinations.vertices.size(); ++r) {
      const auto degree = g.view().degree(destinations.vertices[r]);
      EXPECT_EQ(layer.blocks.indptr[r + 1] - layer.blocks.indptr[r],
                std::min<edge_t>(degree, options.fanouts[hop]));
    }
  }
}

TEST(NodeWiseSampler, FanoutMinusOneTakesTheWholeNeighbourhood) {
  const auto g = random_graph(300, 7);
  const sampler_options options{.fanouts = {-1}, .seed = 1};
  const auto train = all_vertices(300);
  const epoch_plan plan(train, 300, 0, 0);
  bulk_sampler sampler(g.view(), options);
  const auto bulk = sampler.sample(plan, 0, 1);
  EXPECT_EQ(bulk.sampled_edges(), g.nnz());
}

TEST(LayerWiseSampler, BlockRowsAreNormalisedImportanceWeights) {
  const auto g = random_graph(400, 8);
  const sampler_options options{.kind = "ladies", .fanouts = {25}, .seed = 2};
  const auto train = all_vertices(400);
  const epoch_plan plan(train, 20, 0, 0);
  bulk_sampler sampler(g.view(), options);
  const auto bulk = sampler.sample(plan, 0, plan.num_minibatches());
  const auto& blocks = bulk.layers[0].blocks;
  for (std::int64_t r = 0; r < blocks.rows; ++r) {
    double sum = 0;
    for (auto e = blocks.indptr[r]; e < blocks.indptr[r + 1]; ++e) sum += blocks.values[e];
    EXPECT_NEAR(sum, 1.0, 1e-5);
  }
}

TEST(BulkSampler, RejectsSeedsOutsideTheGraph) {
  const auto g = random_graph(50, 10);
  const std::vector<vertex_t> train{3, 77};
  const epoch_plan plan(train, 2, 0, 0);
  for (const std::string kind : {"sage", "ladies"}) {
    bulk_sampler sampler(g.view(), sampler_options{.kind = kind, .fanouts = {3}});
    EXPECT_THROW((void)sampler.sample(plan, 0, 1), option_error);
  }
}

TEST(SamplerOptions, ImpossibleFanoutsAreRejected) {
  const auto g = random_graph(50, 9);
  EXPECT_THROW(bulk_sampler(g.view(), sampler_options{.fanouts = {}}), option_error);
  EXPECT_THROW(bulk_sampler(g.view(), sampler_options{.fanouts = {5, 0}}), option_error);
  EXPECT_THROW(bulk_sampler(g.view(), sampler_options{.fanouts = {-2}}), option_error);
  EXPECT_THROW(bulk_sampler(g.view(), sampler_options{.fanouts = {5}, .weighted = true}),
               option_error);
  EXPECT_THROW(bulk_sampler(g.view(), sampler_options{.kind = "ladies",
                                                      .fanouts = {5},
                                                      .replacement = kernels::replacement::with}),
               option_error);
}

TEST(EpochPlan, CoversEveryTrainingVertexOnceAndDependsOnTheEpoch) {
  const auto train = all_vertices(1000);
  const epoch_plan a(train, 64, 5, 0), b(train, 64, 5, 1);
  EXPECT_EQ(a.num_minibatches(), 16);
  std::vector<vertex_t> seen;
  for (std::int64_t m = 0; m < a.num_minibatches(); ++m)
    for (auto v : a.seeds(m)) seen.push_back(v);
  std::sort(seen.begin(), seen.end());
  EXPECT_EQ(seen, train);
  EXPECT_NE(std::vector<vertex_t>(a.seeds(0).begin(), a.seeds(0).end()),
            std::vector<vertex_t>(b.seeds(0).begin(), b.seeds(0).end()));
  EXPECT_THROW(epoch_plan(train, 0, 5, 0), option_error);
}

// Serves rows as a sharded graph does: copied out, one per request.
class copying_rows final : public row_source {
 public:
  explicit copying_rows(csr_view graph) : graph_(graph) {}
  vertex_t num_vertices() const override { return static_cast<vertex_t>(graph_.rows); }
  bool weighted() const override { return graph_.weighted(); }
  gathered_rows rows(std::span<const vertex_t> vertices) override {
    return wrap_fetched_rows(kernels::gather_rows({}, graph_, vertices));
  }

 private:
  csr_view graph_;
};

// FastGCN without the whole graph computes its distribution from every
// row's slice and gathers its blocks from the frontier's slices.
TEST(RowSources, FetchedRowsGiveExactlyTheMinibatchesOfTheWholeGraph) {
  const auto g = random_graph(600, 5);
  const auto train = all_vertices(600);
  const epoch_plan plan(train, 24, 0, 2);
  for (const std::string kind : {"sage", "ladies", "fastgcn", "random-walk"}) {
    const auto options = options_for(kind);
    bulk_sampler whole(g.view(), options);
    copying_rows fetched_source(g.view());
    bulk_sampler fetched(fetched_source, options);
    for (std::int64_t first = 0; first < plan.num_minibatches(); first += 6) {
      const auto count = std::min<std::int64_t>(6, plan.num_minibatches() - first);
      const auto a = whole.sample(plan, first, count);
      const auto b = fetched.sample(plan, first, count);
      for (std::int64_t j = 0; j < count; ++j) {
        EXPECT_EQ(a.digest(j), b.digest(j)) << kind << " minibatch " << first + j;
        const auto ma = a.extract(j);
        const auto mb = b.extract(j);
        ASSERT_EQ(ma.blocks.size(), mb.blocks.size());
        for (std::size_t l = 0; l < ma.blocks.size(); ++l) {
          EXPECT_EQ(ma.blocks[l].indices, mb.blocks[l].indices);
          EXPECT_EQ(ma.blocks[l].values, mb.blocks[l].values);
        }
      }
    }
  }
}

// Per hop, the set of (dst, src) global edges of minibatch j.
std::vector<std::set<std::pair<vertex_t, vertex_t>>> edge_sets(const minibatch& mb) {
  std::vector<std::set<std::pair<vertex_t, vertex_t>>> hops;
  for (const auto& block : mb.blocks) {
    auto& edges = hops.emplace_back();
    for (std::int64_t r = 0; r < block.rows; ++r)
      for (auto e = block.indptr[r]; e < block.indptr[r + 1]; ++e)
        edges.emplace(mb.input_nodes[r], mb.input_nodes[block.indices[e]]);
  }
  return hops;
}

TEST(NodeWiseSampler, SlicesOfAMinibatchSampleExactlyThePartsTheirSeedsReach) {
  const auto g = random_graph(800, 7);
  const auto train = all_vertices(800);
  const epoch_plan plan(train, 60, 0, 1);
  const auto options = options_for("sage");
  bulk_sampler sampler(g.view(), options);
  const std::int64_t id = 4;
  const auto whole = edge_sets(sampler.sample(plan, id, 1).extract(0));
  const auto seeds = plan.seeds(id);
  std::vector<std::set<std::pair<vertex_t, vertex_t>>> united(whole.size());
  for (std::size_t begin = 0; begin < seeds.size(); begin += 17) {
    segmented_vertices slice;
    slice.push_segment(seeds.subspan(begin, std::min<std::size_t>(17, seeds.size() - begin)));
    const std::int64_t ids[] = {id};
    const auto part = edge_sets(sampler.sample(plan.epoch(), slice, ids).extract(0));
    for (std::size_t h = 0; h < whole.size(); ++h) {
      for (const auto& edge : part[h]) EXPECT_TRUE(whole[h].contains(edge));
      united[h].insert(part[h].begin(), part[h].end());
    }
  }
  EXPECT_EQ(united, whole);
}

}  // namespace
}  // namespace bulkgnn::sampler
