#include "bulkgnn/data/link_split.hpp"

#include "bulkgnn/core/error.hpp"
#include "bulkgnn/core/rng.hpp"

#include <gtest/gtest.h>

#include "scratch_dir.hpp"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <set>
#include <string>

namespace bulkgnn::data {
namespace {

using edge = std::pair<vertex_t, vertex_t>;  // (source, target)

// A random graph of n vertices with about n·degree/2 edges, both directions
// stored when `undirected`, a few loops.
csr_matrix random_graph(vertex_t n, int degree, bool undirected, std::uint32_t seed) {
  std::vector<std::set<vertex_t>> rows(static_cast<std::size_t>(n));
  philox_stream rng(rng_key{seed, 0, 0, 0, 0});
  for (std::int64_t k = 0; k < std::int64_t{n} * degree / 2; ++k) {
    const auto s = static_cast<vertex_t>(rng.uniform_below(static_cast<std::uint32_t>(n)));
    const auto t = static_cast<vertex_t>(rng.uniform_below(static_cast<std::uint32_t>(n)));
    rows[static_cast<std::size_t>(t)].insert(s);
    if (undirected) rows[static_cast<std::size_t>(s)].insert(t);
  }
  csr_matrix g;
  g.rows = g.cols = n;
  for (const auto& row : rows) {
    g.indices.insert(g.indices.end(), row.begin(), row.end());
    g.indptr.push_back(static_cast<edge_t>(g.indices.size()));
  }
  return g;
}

std::set<edge> edges_of(csr_view g) {
  std::set<edge> out;
  for (vertex_t t = 0; t < g.rows; ++t)
    for (const auto s : g.row(t)) out.insert({s, t});
  return out;
}

std::set<edge> listed(const edge_arrays& e, bool both_ways) {
  std::set<edge> out;
  for (std::int64_t i = 0; i < e.size(); ++i) {
    out.insert({e.source[i], e.target[i]});
    if (both_ways) out.insert({e.target[i], e.source[i]});
  }
  return out;
}

TEST(LinkSplit, AnUndirectedGraphsEdgesSplitOnceEachWithTheRightGraphs) {
  const auto g = random_graph(500, 8, true, 1);
  const auto split = random_link_split(g.view(), {.valid_fraction = 0.1, .test_fraction = 0.2});
  ASSERT_TRUE(split.undirected);
  std::set<edge> undirected;
  for (const auto& [s, t] : edges_of(g.view()))
    if (s < t) undirected.insert({s, t});
  const auto m = static_cast<double>(undirected.size());
  EXPECT_EQ(split.test.size(), static_cast<std::int64_t>(std::floor(0.2 * m)));
  EXPECT_EQ(split.valid.size(), static_cast<std::int64_t>(std::floor(0.1 * m)));
  std::set<edge> all = listed(split.train, false);
  for (const auto* part : {&split.valid, &split.test})
    for (std::int64_t i = 0; i < part->size(); ++i) {
      EXPECT_LT(part->source[i], part->target[i]);
      EXPECT_TRUE(all.insert({part->source[i], part->target[i]}).second) << "split twice";
    }
  EXPECT_EQ(all, undirected);
  // Messages pass over the training edges (then also the valid ones), both ways.
  EXPECT_EQ(edges_of(split.train_graph.view()), listed(split.train, true));
  auto before_test = listed(split.train, true);
  before_test.merge(listed(split.valid, true));
  EXPECT_EQ(edges_of(split.test_graph.view()), before_test);
}

TEST(LinkSplit, EvaluationNegativesAreDistinctAndNoEdgesOfTheWholeGraph) {
  const auto g = random_graph(300, 10, true, 2);
  const auto split = random_link_split(g.view(), {.negatives_per_positive = 2.5, .seed = 4});
  const auto edges = edges_of(g.view());
  // Each pair once (unordered: undirected), none both a valid and a test negative.
  auto all = listed(split.valid_negatives, false);
  EXPECT_EQ(all.size(), static_cast<std::size_t>(split.valid_negatives.size()));
  for (std::int64_t i = 0; i < split.test_negatives.size(); ++i) {
    EXPECT_LT(split.test_negatives.source[i], split.test_negatives.target[i]);
    EXPECT_TRUE(
        all.insert({split.test_negatives.source[i], split.test_negatives.target[i]}).second);
  }
  for (const auto& [positives, negatives] :
       {std::pair{&split.valid, &split.valid_negatives}, {&split.test, &split.test_negatives}}) {
    EXPECT_EQ(negatives->size(),
              static_cast<std::int64_t>(std::ceil(2.5 * static_cast<double>(positives->size()))));
    for (std::int64_t i = 0; i < negatives->size(); ++i) {
      EXPECT_NE(negatives->source[i], negatives->target[i]);
      EXPECT_FALSE(edges.contains({negatives->source[i], negatives->target[i]}));
    }
  }
}

TEST(LinkSplit, ADirectedGraphSplitsEachStoredEdgeAndLoopsStayOut) {
  auto g = random_graph(300, 6, false, 3);
  const auto split = random_link_split(g.view(), {});
  ASSERT_FALSE(split.undirected);
  std::set<edge> without_loops;
  for (const auto& [s, t] : edges_of(g.view()))
    if (s != t) without_loops.insert({s, t});
  auto all = listed(split.train, false);
  all.merge(listed(split.valid, false));
  all.merge(listed(split.test, false));
  EXPECT_EQ(all, without_loops);
  EXPECT_EQ(edges_of(split.train_graph.view()), listed(split.train, false));
}

TEST(LinkSplit, TheSeedAloneDecides) {
  const auto g = random_graph(200, 6, true, 5);
  const auto a = random_link_split(g.view(), {.seed = 1});
  EXPECT_EQ(a.test.source, random_link_split(g.view(), {.seed = 1}).test.source);
  EXPECT_NE(a.test.source, random_link_split(g.view(), {.seed = 2}).test.source);
}

TEST(LinkSplit, ImpossibleOptionsAreRefusedByName) {
  const auto g = random_graph(50, 4, true, 6);
  const auto refusal = [&](const link_split_options& o) -> std::string {
    try {
      std::ignore = random_link_split(g.view(), o);
      return {};
    } catch (const option_error& e) {
      return e.what();
    }
  };
  EXPECT_NE(refusal({.valid_fraction = -0.1}).find("link_split_options.valid_fraction"),
            std::string::npos);
  EXPECT_NE(refusal({.test_fraction = std::nan("")}).find("link_split_options.test_fraction"),
            std::string::npos);
  EXPECT_NE(refusal({.valid_fraction = 0.5, .test_fraction = 0.5}).find("no training edges"),
            std::string::npos);
  // Every pair of 4 vertices is an edge: no negative exists.
  csr_matrix complete;
  complete.rows = complete.cols = 4;
  for (vertex_t v = 0; v < 4; ++v) {
    for (vertex_t u = 0; u < 4; ++u)
      if (u != v) complete.indices.push_back(u);
    complete.indptr.push_back(static_cast<edge_t>(complete.indices.size()));
  }
  try {
    std::ignore = random_link_split(complete.view(), {.valid_fraction = 0.3});
    ADD_FAILURE() << "accepted";
  } catch (const option_error& e) {
    EXPECT_NE(std::string(e.what()).find("link_split_options.negatives_per_positive"),
              std::string::npos);
  }
}

void expect_same_edges(const edge_arrays& a, const edge_arrays& b, const char* part) {
  EXPECT_EQ(a.source, b.source) << part;
  EXPECT_EQ(a.target, b.target) << part;
}

void expect_same_graph(const csr_matrix& a, const csr_matrix& b, const char* which) {
  EXPECT_EQ(a.indptr, b.indptr) << which;
  EXPECT_EQ(a.indices, b.indices) << which;
}

// A repeated edge is split once: its copies never land on both sides, so
// split-links stores what train would make, with no held-out edge among the
// ones messages pass over.
TEST(LinkSplit, ARepeatedEdgeIsSplitOnce) {
  const testing::scratch_dir dir;
  const auto g = random_graph(300, 6, true, 9);
  csr_matrix doubled;  // every edge stored twice
  doubled.rows = doubled.cols = g.rows;
  for (vertex_t v = 0; v < g.rows; ++v) {
    for (const vertex_t u : g.view().row(v)) {
      doubled.indices.push_back(u);
      doubled.indices.push_back(u);
    }
    doubled.indptr.push_back(static_cast<edge_t>(doubled.indices.size()));
  }
  const auto split = random_link_split(doubled.view(), {.seed = 4});
  const auto single = random_link_split(g.view(), {.seed = 4});
  EXPECT_EQ(split.train.source, single.train.source);
  EXPECT_EQ(split.test.target, single.test.target);
  write_link_split(dir / "doubled", split, doubled.view());
  const auto read = read_link_split(dir / "doubled", doubled.view());
  EXPECT_EQ(read.valid_in_training, 0);
  EXPECT_EQ(read.test_in_training_or_valid, 0);
}

TEST(StoredLinkSplit, ReadsBackWhatWasWrittenWithTheSameGraphs) {
  const testing::scratch_dir dir;
  for (const bool undirected : {true, false}) {
    const auto g = random_graph(400, 6, undirected, 7);
    const auto split = random_link_split(g.view(), {.seed = 2});
    const auto path = dir / (undirected ? "undirected" : "directed");
    write_link_split(path, split, g.view());
    const auto read = read_link_split(path, g.view());
    EXPECT_EQ(read.undirected, split.undirected);
    expect_same_edges(read.train, split.train, "train");
    expect_same_edges(read.valid, split.valid, "valid");
    expect_same_edges(read.test, split.test, "test");
    expect_same_edges(read.valid_negatives, split.valid_negatives, "valid negatives");
    expect_same_edges(read.test_negatives, split.test_negatives, "test negatives");
    expect_same_graph(read.train_graph, split.train_graph, "train graph");
    expect_same_graph(read.test_graph, split.test_graph, "test graph");
    // Written again over itself: replaced whole.
    write_link_split(path, split, g.view());
    expect_same_edges(read_link_split(path, g.view()).train, split.train, "rewritten train");
  }
}

// OGB's layout: the graph holds the training edges only (both ways), the
// training edges may be listed both ways, the valid and test edges are no
// edges of the graph; testing passes messages over the valid ones too.
TEST(StoredLinkSplit, AnOgbStyleSplitPassesMessagesOverItsTrainingEdgesThenTheValidOnes) {
  const testing::scratch_dir dir;
  link_split ogb;
  for (const auto& [s, t] : {edge{0, 1}, edge{1, 0}, edge{1, 2}, edge{2, 3}, edge{3, 2}})
    ogb.train.push_back(s, t);
  ogb.valid.push_back(0, 3);
  ogb.test.push_back(1, 3);
  ogb.valid_negatives.push_back(0, 2);
  csr_matrix g;  // 0-1, 1-2, 2-3 both ways
  g.rows = g.cols = 4;
  g.indptr = {0, 1, 3, 5, 6};
  g.indices = {1, 0, 2, 1, 3, 2};
  write_link_split(dir / "ogb", ogb, g.view());
  const auto read = read_link_split(dir / "ogb", g.view());
  EXPECT_TRUE(read.undirected);
  expect_same_graph(read.train_graph, g, "train graph");
  EXPECT_EQ(edges_of(read.test_graph.view()),
            (std::set<edge>{{1, 0}, {0, 1}, {2, 1}, {1, 2}, {3, 2}, {2, 3}, {0, 3}, {3, 0}}));
  EXPECT_TRUE(read.test_negatives.source.empty());
}

// Each held-out positive's own negative targets (ogbl-citation2's) are kept
// as P x K arrays and read back; a count that is not K per positive, or a
// vertex outside the graph, is refused naming the file.
TEST(StoredLinkSplit, NegativeTargetsOfEachPositiveAreKept) {
  const testing::scratch_dir dir;
  const auto g = random_graph(80, 4, true, 5);
  auto split = random_link_split(g.view(), {});
  split.test_negative_targets.per_positive = 3;
  for (std::int64_t i = 0; i < split.test.size(); ++i)
    for (vertex_t k = 0; k < 3; ++k)
      split.test_negative_targets.targets.push_back(static_cast<vertex_t>((i + k) % 80));
  write_link_split(dir / "targets", split, g.view());
  const auto read = read_link_split(dir / "targets", g.view());
  EXPECT_TRUE(read.valid_negative_targets.empty());
  EXPECT_EQ(read.test_negative_targets.per_positive, 3);
  EXPECT_EQ(read.test_negative_targets.targets, split.test_negative_targets.targets);
  const auto refusal = [&](const link_split& bad) {
    try {
      write_link_split(dir / "bad", bad, g.view());
    } catch (const data_error& e) {
      return std::string(e.what());
    }
    return std::string("accepted");
  };
  auto short_one = split;
  short_one.test_negative_targets.targets.pop_back();
  EXPECT_NE(refusal(short_one).find("test_negative_targets.npy: holds"), std::string::npos);
  auto outside = split;
  outside.test_negative_targets.targets[4] = 80;
  EXPECT_NE(refusal(outside).find("positive 1's target 1 is vertex 80"), std::string::npos);
}

TEST(StoredLinkSplit, ABadSplitIsRefusedNamingTheFileAndEdge) {
  const testing::scratch_dir dir;
  const auto g = random_graph(50, 4, true, 3);
  const auto good = random_link_split(g.view(), {});
  const auto refusal = [&](const link_split& split) {
    try {
      write_link_split(dir / "bad", split, g.view());
      return std::string("accepted");
    } catch (const error& e) {
      return std::string(e.what());
    }
  };
  const auto refusal_at = [&](const std::filesystem::path& path) {
    try {
      write_link_split(path, good, g.view());
      return std::string("accepted");
    } catch (const error& e) {
      return std::string(e.what());
    }
  };
  auto outside = good;
  outside.test.target[1] = 50;
  EXPECT_NE(refusal(outside).find("test.npy: edge 1"), std::string::npos) << refusal(outside);
  EXPECT_NE(refusal(outside).find("outside the graph's [0, 50)"), std::string::npos);
  auto loop = good;
  loop.valid.target[0] = loop.valid.source[0];
  EXPECT_NE(refusal(loop).find("valid.npy: edge 0 is a loop"), std::string::npos) << refusal(loop);
  auto absent = good;
  absent.train.source[2] = good.valid_negatives.source[0];
  absent.train.target[2] = good.valid_negatives.target[0];
  EXPECT_NE(refusal(absent).find("train.npy: training edge 2"), std::string::npos)
      << refusal(absent);
  // A held-out edge that messages pass over is counted, not refused.
  auto overlapping = good;
  overlapping.test.push_back(good.train.target[4], good.train.source[4]);  // reversed
  overlapping.test.push_back(good.valid.source[0], good.valid.target[0]);
  write_link_split(dir / "overlapping", overlapping, g.view());
  const auto read_back = read_link_split(dir / "overlapping", g.view());
  EXPECT_EQ(read_back.valid_in_training, 0);
  EXPECT_EQ(read_back.test_in_training_or_valid, 2);
  EXPECT_FALSE(std::filesystem::exists(dir / "bad")) << "a refused split left files behind";
  // Never written over a directory of another kind, such as a dataset.
  std::filesystem::create_directories(dir / "dataset");
  std::ofstream(dir / "dataset" / "manifest.json") << R"({"format": "bulkgnn-native"})";
  EXPECT_NE(refusal_at(dir / "dataset").find("is not a bulkgnn-link-split directory"),
            std::string::npos);
  EXPECT_TRUE(std::filesystem::exists(dir / "dataset" / "manifest.json"));

  write_link_split(dir / "good", good, g.view());
  const auto other = random_graph(60, 4, true, 3);
  try {
    std::ignore = read_link_split(dir / "good", other.view());
    ADD_FAILURE() << "a split for 50 vertices read for 60";
  } catch (const data_error& e) {
    EXPECT_NE(std::string(e.what()).find("manifest.json: the split is for 50 vertices"),
              std::string::npos)
        << e.what();
  }
  std::filesystem::remove(dir / "good" / "valid.npy");
  EXPECT_THROW(std::ignore = read_link_split(dir / "good", g.view()), data_error);
  EXPECT_THROW(std::ignore = read_link_split(dir / "missing", g.view()), data_error);
}

}  // namespace
}  // namespace bulkgnn::data
