// Link prediction's minibatches (sampler/link/): positives shuffled per
// epoch, negatives drawn from their definition (statistical tests with
// stated power, tests/support/statistics.hpp), strict negatives never
// edges, a minibatch's own edges never in its blocks, and the same
// minibatches for any bulk size and thread count.
#include "bulkgnn/sampler/link_seeds.hpp"

#include "bulkgnn/core/error.hpp"
#include "bulkgnn/core/parallel.hpp"

#include "program_examples.hpp"
#include "statistics.hpp"
#include "test_graphs.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <set>
#include <string>

namespace bulkgnn::sampler {
namespace {

using testing::has_edge;

// `g` with every edge's reverse added: an undirected graph, as OGB's
// to-undirected import stores it.
csr_matrix symmetric(csr_view g) {
  std::vector<std::set<vertex_t>> rows(static_cast<std::size_t>(g.rows));
  for (vertex_t v = 0; v < g.rows; ++v)
    for (const auto u : g.row(v)) {
      rows[static_cast<std::size_t>(v)].insert(u);
      rows[static_cast<std::size_t>(u)].insert(v);
    }
  csr_matrix s;
  s.rows = s.cols = g.rows;
  for (const auto& row : rows) {
    s.indices.insert(s.indices.end(), row.begin(), row.end());
    s.indptr.push_back(static_cast<edge_t>(s.indices.size()));
  }
  return s;
}

// Every edge of `g` as a positive: source u → target v for u in row v.
struct all_edges {
  std::vector<vertex_t> source;
  std::vector<vertex_t> target;

  explicit all_edges(csr_view g) {
    for (vertex_t v = 0; v < g.rows; ++v)
      for (const auto u : g.row(v)) {
        source.push_back(u);
        target.push_back(v);
      }
  }
  [[nodiscard]] edge_list list() const { return {source, target}; }
};

link_options options_of(negative_sampling negatives, std::int64_t batch = 64,
                        std::uint32_t seed = 5) {
  return {.batch_size = batch, .seed = seed, .negatives = negatives};
}

TEST(LinkSeeds, AMinibatchIsLaidOutAsPygsLinkNeighborLoaderBatch) {
  const auto g = symmetric(testing::random_graph(300, 3).view());
  const all_edges positives(g.view());
  const negative_sampler negatives(g.view(), {.amount = 1.5});
  const link_epoch_plan plan(positives.list(), negatives, options_of({.amount = 1.5}, 100), 0);
  std::vector<std::int64_t> seen;
  for (std::int64_t m = 0; m < plan.num_minibatches(); ++m) {
    const auto s = plan.seeds(m);
    const auto p = s.positives();
    const auto negative_count = static_cast<std::int64_t>(std::ceil(static_cast<double>(p) * 1.5));
    ASSERT_EQ(s.label_source.size(), static_cast<std::size_t>(p + negative_count));
    ASSERT_EQ(s.label_target.size(), s.label_source.size());
    ASSERT_EQ(s.edge_label.size(), s.label_source.size());
    EXPECT_TRUE(std::ranges::is_sorted(s.nodes));
    EXPECT_EQ(std::ranges::adjacent_find(s.nodes), s.nodes.end());
    std::set<vertex_t> endpoints;
    for (std::size_t k = 0; k < s.label_source.size(); ++k) {
      endpoints.insert(s.global(s.label_source[k]));
      endpoints.insert(s.global(s.label_target[k]));
      EXPECT_EQ(s.edge_label[k], static_cast<std::int64_t>(k) < p ? 1.0f : 0.0f);
    }
    EXPECT_EQ(std::vector<vertex_t>(endpoints.begin(), endpoints.end()), s.nodes);
    for (std::int64_t i = 0; i < p; ++i) {
      const auto id = static_cast<std::size_t>(s.input_id[static_cast<std::size_t>(i)]);
      EXPECT_EQ(s.global(s.label_source[static_cast<std::size_t>(i)]), positives.source[id]);
      EXPECT_EQ(s.global(s.label_target[static_cast<std::size_t>(i)]), positives.target[id]);
      seen.push_back(static_cast<std::int64_t>(id));
    }
  }
  // Every positive once an epoch.
  std::ranges::sort(seen);
  std::vector<std::int64_t> every(positives.source.size());
  std::iota(every.begin(), every.end(), 0);
  EXPECT_EQ(seen, every);
}

TEST(LinkSeeds, TheOrderDependsOnTheSeedAndEpochAlone) {
  const auto g = testing::random_graph(200, 4);
  const all_edges positives(g.view());
  const negative_sampler negatives(g.view(), {});
  const auto first_ids = [&](std::uint32_t seed, std::uint32_t epoch) {
    return link_epoch_plan(positives.list(), negatives, options_of({}, 32, seed), epoch)
        .seeds(0)
        .input_id;
  };
  EXPECT_EQ(first_ids(1, 0), first_ids(1, 0));
  EXPECT_NE(first_ids(1, 0), first_ids(1, 1));
  EXPECT_NE(first_ids(1, 0), first_ids(2, 0));
}

TEST(LinkSeeds, TripletNegativesCorruptEachPositivesTarget) {
  const auto g = testing::random_graph(300, 6);
  const all_edges positives(g.view());
  const negative_sampling triplet{.mode = negative_mode::triplet, .amount = 3, .strict = true};
  const negative_sampler negatives(g.view(), triplet);
  const link_epoch_plan plan(positives.list(), negatives, options_of(triplet, 50), 2);
  for (std::int64_t m = 0; m < plan.num_minibatches(); ++m) {
    const auto s = plan.seeds(m);
    EXPECT_TRUE(s.edge_label.empty());
    ASSERT_EQ(s.label_source.size(), static_cast<std::size_t>(s.positives()));
    ASSERT_EQ(s.negative_target.size(), static_cast<std::size_t>(s.positives() * 3));
    for (std::int64_t i = 0; i < s.positives(); ++i)
      for (int k = 0; k < 3; ++k) {
        const auto source = s.global(s.label_source[static_cast<std::size_t>(i)]);
        const auto target = s.global(s.negative_target[static_cast<std::size_t>(i * 3 + k)]);
        EXPECT_NE(source, target);
        EXPECT_FALSE(has_edge(g.view(), target, source)) << source << " -> " << target;
      }
  }
}

// Each endpoint of a binary negative is one draw from the distribution the
// options name; many minibatches pooled give a multinomial sample of the
// vertices, tested by Pearson's chi-square at alpha 1e-4. Its power is
// checked first against a named mistake: `wrong` (the distribution a broken
// sampler would draw from).
void expect_endpoints_follow(csr_view g, negative_distribution distribution,
                             const std::vector<double>& p, const std::vector<double>& wrong) {
  const all_edges positives(g);
  const negative_sampling o{.amount = 4, .distribution = distribution};
  const negative_sampler negatives(g, o);
  std::vector<double> counts(static_cast<std::size_t>(g.rows));
  double draws = 0;
  for (std::uint32_t epoch = 0; epoch < 4; ++epoch) {
    const link_epoch_plan plan(positives.list(), negatives, options_of(o, 256), epoch);
    for (std::int64_t m = 0; m < plan.num_minibatches(); ++m) {
      const auto s = plan.seeds(m);
      for (auto k = static_cast<std::size_t>(s.positives()); k < s.label_source.size(); ++k) {
        counts[static_cast<std::size_t>(s.global(s.label_source[k]))] += 1;
        counts[static_cast<std::size_t>(s.global(s.label_target[k]))] += 1;
        draws += 2;
      }
    }
  }
  std::vector<double> expected(p.size());
  double lambda = 0;
  for (std::size_t v = 0; v < p.size(); ++v) {
    expected[v] = draws * p[v];
    // A vertex of probability 0 (no in-edges, by degree) must never come.
    if (p[v] == 0) {
      EXPECT_EQ(counts[v], 0) << "vertex " << v;
      continue;
    }
    lambda += draws * (wrong[v] - p[v]) * (wrong[v] - p[v]) / p[v];
  }
  const auto test = testing::pearson_pooled(counts, expected);
  const double critical = testing::chi_square_critical(test.degrees);
  ASSERT_GE(testing::chi_square_power(test.degrees, lambda, critical), testing::required_power);
  EXPECT_LT(test.statistic, critical) << "over " << draws << " draws";
}

TEST(LinkSeedsStatistics, UniformNegativesDrawEveryVertexAlike) {
  const vertex_t n = 200;
  const auto g = testing::random_graph(n, 8);
  // The mistake: the last vertex never drawn (a bound one short).
  std::vector<double> p(n, 1.0 / n), wrong(n, 1.0 / (n - 1));
  wrong.back() = 0;
  expect_endpoints_follow(g.view(), negative_distribution::uniform, p, wrong);
}

TEST(LinkSeedsStatistics, DegreeNegativesFollowTheDegreeToTheThreeQuarters) {
  const vertex_t n = 200;
  const auto g = testing::random_graph(n, 9);
  // The mistake: in proportion to the degree itself.
  std::vector<double> p(n), wrong(n);
  double total = 0, total_wrong = 0;
  for (vertex_t v = 0; v < n; ++v) {
    const auto d = static_cast<double>(g.view().row(v).size());
    p[v] = std::pow(d, 0.75);
    wrong[v] = d;
    total += p[v];
    total_wrong += d;
  }
  for (vertex_t v = 0; v < n; ++v) {
    p[v] /= total;
    wrong[v] /= total_wrong;
  }
  expect_endpoints_follow(g.view(), negative_distribution::degree, p, wrong);
}

TEST(LinkSeeds, StrictNegativesAreNeverEdgesOrLoopsAndTheCheckMatters) {
  // Dense: half of all pairs are edges, so unchecked negatives hit many.
  const auto g = testing::regular_graph(40, 20, 1);
  const all_edges positives(g.view());
  for (const bool strict : {false, true}) {
    const negative_sampling o{.amount = 2, .strict = strict};
    const negative_sampler negatives(g.view(), o);
    const link_epoch_plan plan(positives.list(), negatives, options_of(o, 100), 0);
    std::int64_t hits = 0;
    for (std::int64_t m = 0; m < plan.num_minibatches(); ++m) {
      const auto s = plan.seeds(m);
      for (auto k = static_cast<std::size_t>(s.positives()); k < s.label_source.size(); ++k) {
        const auto source = s.global(s.label_source[k]);
        const auto target = s.global(s.label_target[k]);
        hits += source == target || has_edge(g.view(), target, source) ? 1 : 0;
      }
    }
    if (strict)
      EXPECT_EQ(hits, 0);
    else
      EXPECT_GT(hits, 100);
  }
}

TEST(LinkSeeds, StrictNegativesThatCannotBeMetAreRefusedByName) {
  // Every pair of 6 vertices is an edge.
  csr_matrix complete;
  complete.rows = complete.cols = 6;
  for (vertex_t v = 0; v < 6; ++v) {
    for (vertex_t u = 0; u < 6; ++u)
      if (u != v) complete.indices.push_back(u);
    complete.indptr.push_back(static_cast<edge_t>(complete.indices.size()));
  }
  const all_edges positives(complete.view());
  for (const auto mode : {negative_mode::binary, negative_mode::triplet}) {
    const negative_sampling o{.mode = mode, .strict = true};
    const negative_sampler negatives(complete.view(), o);
    const link_epoch_plan plan(positives.list(), negatives, options_of(o), 0);
    try {
      std::ignore = plan.seeds(0);
      ADD_FAILURE() << "accepted";
    } catch (const option_error& e) {
      EXPECT_NE(std::string(e.what()).find("negative_sampling.strict"), std::string::npos)
          << e.what();
    }
  }
}

TEST(LinkSeeds, ImpossibleOptionsAndEdgesAreRefusedByName) {
  const auto g = testing::random_graph(50, 2);
  const all_edges positives(g.view());
  const negative_sampler negatives(g.view(), {});
  const auto refusal = [&](const link_options& o, edge_list list) -> std::string {
    try {
      std::ignore = link_epoch_plan(list, negatives, o, 0);
      return {};
    } catch (const option_error& e) {
      return e.what();
    }
  };
  EXPECT_NE(refusal(options_of({}, 0), positives.list()).find("link_options.batch_size"),
            std::string::npos);
  EXPECT_NE(refusal(options_of({.amount = std::nan("")}), positives.list())
                .find("negative_sampling.amount"),
            std::string::npos);
  EXPECT_NE(refusal(options_of({.mode = negative_mode::triplet, .amount = 1.5}), positives.list())
                .find("whole number"),
            std::string::npos);
  const std::vector<vertex_t> source{0, 1}, target{2, 50};
  EXPECT_NE(refusal(options_of({}), {source, target}).find("positive edge 1 (1 -> 50)"),
            std::string::npos);
  EXPECT_NE(refusal(options_of({}), {}).find("no positive edges"), std::string::npos);
  csr_matrix empty_graph;
  empty_graph.rows = empty_graph.cols = 3;
  empty_graph.indptr = {0, 0, 0, 0};
  EXPECT_THROW(std::ignore = negative_sampler(empty_graph.view(),
                                              {.distribution = negative_distribution::degree}),
               option_error);
  EXPECT_THROW(std::ignore = parse_edge_exclusion("reverse_id"), option_error);
}

// sample_links: the minibatch's blocks grown from its endpoints, without
// its own edges. With every neighbour taken (fanout -1), the seed edges are
// in the blocks unless left out, so the test can fail.
std::int64_t seed_edges_in_blocks(const csr_matrix& g, edge_exclusion exclude,
                                  const std::string& sampler_kind = "sage",
                                  std::vector<std::int64_t> fanouts = {-1, 3}) {
  const all_edges positives(g.view());
  const negative_sampler negatives(g.view(), {});
  const link_epoch_plan plan(positives.list(), negatives, options_of({}, 40), 0);
  bulk_sampler sampler(g.view(), {.kind = sampler_kind, .fanouts = std::move(fanouts), .seed = 5});
  const auto bulk = sample_links(sampler, plan, 0, plan.num_minibatches(), exclude);
  std::int64_t found = 0;
  for (std::int64_t j = 0; j < bulk.count(); ++j) {
    const auto& s = bulk.seeds[static_cast<std::size_t>(j)];
    std::set<std::pair<vertex_t, vertex_t>> seed_edges;  // (destination, source)
    for (std::int64_t i = 0; i < s.positives(); ++i) {
      const auto source = s.global(s.label_source[static_cast<std::size_t>(i)]);
      const auto target = s.global(s.label_target[static_cast<std::size_t>(i)]);
      seed_edges.insert({target, source});
      seed_edges.insert({source, target});
    }
    EXPECT_EQ(std::vector<vertex_t>(bulk.nodes.seeds.segment(j).begin(),
                                    bulk.nodes.seeds.segment(j).end()),
              s.nodes);
    // Each hop's sources begin with its destinations; block columns are
    // positions in the sources.
    for (const auto& layer : bulk.nodes.layers) {
      const auto sources = layer.sources.segment(j);
      for (auto r = layer.row_offsets[j]; r < layer.row_offsets[j + 1]; ++r) {
        const auto destination = sources[static_cast<std::size_t>(r - layer.row_offsets[j])];
        for (auto e = layer.blocks.indptr[r]; e < layer.blocks.indptr[r + 1]; ++e) {
          const auto source = sources[static_cast<std::size_t>(layer.blocks.indices[e])];
          found += seed_edges.contains({destination, source}) ? 1 : 0;
        }
      }
    }
  }
  return found;
}

TEST(LinkSampling, AMinibatchsOwnEdgesAreNeverInItsBlocks) {
  const auto g = symmetric(testing::random_graph(300, 12).view());
  EXPECT_GT(seed_edges_in_blocks(g, edge_exclusion::none), 100);
  EXPECT_EQ(seed_edges_in_blocks(g, edge_exclusion::reverse), 0);
  // LABOR keeps every neighbour when the fanout passes the degree.
  EXPECT_GT(seed_edges_in_blocks(g, edge_exclusion::none, "labor", {1000, 3}), 100);
  EXPECT_EQ(seed_edges_in_blocks(g, edge_exclusion::reverse, "labor", {1000, 3}), 0);
  EXPECT_GT(seed_edges_in_blocks(g, edge_exclusion::none, "labor-star", {1000, 3}), 100);
  EXPECT_EQ(seed_edges_in_blocks(g, edge_exclusion::reverse, "labor-star", {1000, 3}), 0);
  // Enough walks to end on most neighbours.
  EXPECT_GT(seed_edges_in_blocks(g, edge_exclusion::none, "random-walk", {100, 3}), 100);
  EXPECT_EQ(seed_edges_in_blocks(g, edge_exclusion::reverse, "random-walk", {100, 3}), 0);
  EXPECT_GT(seed_edges_in_blocks(g, edge_exclusion::none, "pinsage", {100, 3}), 100);
  EXPECT_EQ(seed_edges_in_blocks(g, edge_exclusion::reverse, "pinsage", {100, 3}), 0);
  // A per-destination sampler program leaves them out as sage does.
  bulkgnn::testing::register_example_programs();
  EXPECT_GT(seed_edges_in_blocks(g, edge_exclusion::none, "sage-program", {10, 3}), 100);
  EXPECT_EQ(seed_edges_in_blocks(g, edge_exclusion::reverse, "sage-program", {10, 3}), 0);
}

// Only s -> t leaves with exclude self: its reverse t -> s stays in reach.
TEST(LinkSampling, SelfExclusionLeavesTheReverseEdges) {
  const auto g = symmetric(testing::random_graph(300, 12).view());
  const auto none = seed_edges_in_blocks(g, edge_exclusion::none);
  const auto self = seed_edges_in_blocks(g, edge_exclusion::self);
  EXPECT_GT(self, 0);
  EXPECT_LT(self, none);
}

// What a walk sampler's block row of vertex 1 holds on the path
// 0 - 1 - 2 - 3 - 4, minibatch {1, 2} with `excluded` (null: none) left out.
std::set<vertex_t> walked_from_1_on_a_path(const sampler_options& options,
                                           const kernels::excluded_edges* excluded) {
  csr_matrix path;
  path.rows = path.cols = 5;
  path.indices = {1, 0, 2, 1, 3, 2, 4, 3};
  path.indptr = {0, 1, 3, 5, 7, 8};
  bulk_sampler walks(path.view(), options);
  segmented_vertices seeds;
  seeds.vertices = {1, 2};
  seeds.offsets = {0, 2};
  const std::vector<std::int64_t> ids{0};
  const auto bulk = excluded != nullptr ? walks.sample(0, std::move(seeds), ids, *excluded)
                                        : walks.sample(0, std::move(seeds), ids);
  const auto& layer = bulk.layers.front();
  const auto sources = layer.sources.segment(0);
  std::set<vertex_t> reached;
  for (auto e = layer.blocks.indptr[0]; e < layer.blocks.indptr[1]; ++e)  // row of vertex 1
    reached.insert(sources[static_cast<std::size_t>(layer.blocks.indices[e])]);
  return reached;
}

// Random walks never step along a minibatch's excluded edge: with the path's
// edge 1 - 2 a positive, the walks from 1 stay on {0, 1}, where without the
// exclusion they reach 2 and 3. PinSAGE's walks count every vertex they
// visit but the start: 0 alone once 1 - 2 is left out.
TEST(LinkSampling, WalksNeverStepAlongAnExcludedEdge) {
  kernels::excluded_edges excluded;
  excluded.push_segment({kernels::edge_key(2, 1), kernels::edge_key(1, 2)});
  const sampler_options random_walk{
      .kind = "random-walk", .fanouts = {200}, .seed = 3, .parameters = {{"walk_length", 3}}};
  const auto free = walked_from_1_on_a_path(random_walk, nullptr);
  EXPECT_TRUE(free.contains(2) && free.contains(3));
  EXPECT_EQ(walked_from_1_on_a_path(random_walk, &excluded), (std::set<vertex_t>{0, 1}));
  const sampler_options pinsage{.kind = "pinsage",
                                .fanouts = {-1},
                                .seed = 3,
                                .parameters = {{"walks", 100}, {"termination_percent", 0}}};
  EXPECT_EQ(walked_from_1_on_a_path(pinsage, nullptr), (std::set<vertex_t>{0, 2, 3, 4}));
  EXPECT_EQ(walked_from_1_on_a_path(pinsage, &excluded), (std::set<vertex_t>{0}));
}

// LADIES and FastGCN leave a minibatch's edges out of their blocks too (at
// these fanouts every destination's neighbours are mostly drawn).
TEST(LinkSampling, LayerWiseBlocksNeverHoldAMinibatchsOwnEdges) {
  const auto g = symmetric(testing::random_graph(300, 12).view());
  for (const auto* kind : {"ladies", "fastgcn"}) {
    EXPECT_GT(seed_edges_in_blocks(g, edge_exclusion::none, kind, {256, 64}), 100) << kind;
    EXPECT_EQ(seed_edges_in_blocks(g, edge_exclusion::reverse, kind, {256, 64}), 0) << kind;
  }
}

std::vector<std::uint64_t> link_digests(const csr_matrix& g, std::int64_t bulk_size,
                                        negative_sampling negatives,
                                        const sampler_options& options = {
                                            .kind = "sage", .fanouts = {4, 3}, .seed = 5}) {
  const all_edges positives(g.view());
  const negative_sampler draws(g.view(), negatives);
  const link_epoch_plan plan(positives.list(), draws, options_of(negatives, 30), 3);
  bulk_sampler sampler(g.view(), options);
  std::vector<std::uint64_t> digests;
  for (std::int64_t first = 0; first < plan.num_minibatches(); first += bulk_size) {
    const auto bulk =
        sample_links(sampler, plan, first, std::min(bulk_size, plan.num_minibatches() - first),
                     edge_exclusion::reverse);
    for (std::int64_t j = 0; j < bulk.count(); ++j) digests.push_back(bulk.digest(j));
  }
  return digests;
}

TEST(LinkSampling, SameMinibatchesForAnyBulkSizeAndThreadCount) {
  const auto g = symmetric(testing::random_graph(400, 21).view());
  for (const auto& negatives :
       {negative_sampling{.amount = 2, .distribution = negative_distribution::degree},
        negative_sampling{.mode = negative_mode::triplet, .amount = 2, .strict = true}}) {
    const auto reference = link_digests(g, 1, negatives);
    EXPECT_EQ(std::set<std::uint64_t>(reference.begin(), reference.end()).size(), reference.size());
    EXPECT_EQ(link_digests(g, 5, negatives), reference);
    for (const int threads : {1, 3}) {
      const thread_limit limit(threads);
      EXPECT_EQ(link_digests(g, 100, negatives), reference) << threads << " threads";
    }
  }
  // LADIES, whose distribution leaves each minibatch's own edges out.
  const sampler_options ladies{.kind = "ladies", .fanouts = {32, 16}, .seed = 5};
  const negative_sampling uniform{};
  const auto reference = link_digests(g, 1, uniform, ladies);
  EXPECT_EQ(link_digests(g, 7, uniform, ladies), reference);
  const thread_limit limit(3);
  EXPECT_EQ(link_digests(g, 100, uniform, ladies), reference);
}

}  // namespace
}  // namespace bulkgnn::sampler
