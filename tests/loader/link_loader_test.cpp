// A link loader (minibatch_loader with a link_task): the pipeline hands out
// sample_links' minibatches in order, with their supervision and the
// features of their input nodes, for any bulk size, queue depth and thread
// count.
#include "bulkgnn/loader/loader.hpp"

#include "bulkgnn/core/error.hpp"
#include "bulkgnn/core/parallel.hpp"
#include "test_graphs.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <set>
#include <string>
#include <tuple>
#include <vector>

namespace bulkgnn::loader {
namespace {

// An undirected graph (both directions stored) whose features f(v, c) =
// v + c / 100 name their vertex, and every edge u < v as a positive.
struct link_fixture {
  csr_matrix graph;
  std::int64_t feature_columns = 3;
  std::vector<float> features;
  std::vector<vertex_t> source;
  std::vector<vertex_t> target;

  link_fixture() {
    const auto g = testing::random_graph(800, 4);
    std::vector<std::set<vertex_t>> rows(static_cast<std::size_t>(g.rows));
    for (vertex_t v = 0; v < g.rows; ++v)
      for (const auto u : g.view().row(v)) {
        rows[static_cast<std::size_t>(v)].insert(u);
        rows[static_cast<std::size_t>(u)].insert(v);
      }
    graph.rows = graph.cols = g.rows;
    for (vertex_t v = 0; v < g.rows; ++v) {
      for (const auto u : rows[static_cast<std::size_t>(v)]) {
        graph.indices.push_back(u);
        if (u < v) {
          source.push_back(u);
          target.push_back(v);
        }
      }
      graph.indptr.push_back(static_cast<edge_t>(graph.indices.size()));
    }
    features.resize(static_cast<std::size_t>(graph.rows * feature_columns));
    for (std::int64_t v = 0; v < graph.rows; ++v)
      for (std::int64_t c = 0; c < feature_columns; ++c)
        features[static_cast<std::size_t>(v * feature_columns + c)] =
            static_cast<float>(v) + static_cast<float>(c) / 100;
  }

  [[nodiscard]] graph_source graph_source_of() const {
    return {graph.view(), {graph.rows, feature_columns, features}, {}};
  }
  [[nodiscard]] link_task task(sampler::negative_sampling negatives = {.amount = 2}) const {
    return {.positives = {source, target}, .negatives = negatives};
  }
};

const sampler::sampler_options sage{.kind = "sage", .fanouts = {4, 3}, .seed = 7};
constexpr std::int64_t batch = 50;

// What sample_links gives for the whole epoch at once.
std::vector<std::uint64_t> direct_digests(const link_fixture& f, std::uint32_t epoch) {
  sampler::bulk_sampler nodes(f.graph.view(), sage);
  const sampler::negative_sampler negatives(f.graph.view(), f.task().negatives);
  const sampler::link_epoch_plan plan(
      f.task().positives, negatives,
      {.batch_size = batch, .seed = sage.seed, .negatives = f.task().negatives}, epoch);
  const auto bulk =
      sample_links(nodes, plan, 0, plan.num_minibatches(), sampler::edge_exclusion::reverse);
  std::vector<std::uint64_t> digests;
  for (std::int64_t j = 0; j < bulk.count(); ++j) digests.push_back(bulk.digest(j));
  return digests;
}

TEST(LinkLoader, HandsOutSampleLinksMinibatchesWithTheirFeatures) {
  const link_fixture f;
  const auto expected = direct_digests(f, 2);
  for (const auto& [bulk, threads] : {std::pair{1, 1}, {7, 2}, {100, 3}}) {
    const thread_limit limit(threads);
    sampler::bulk_sampler nodes(f.graph.view(), sage);
    minibatch_loader loader(f.graph_source_of(), nodes, f.task(),
                            {.batch_size = batch, .bulk = bulk, .ready_queue = 3});
    auto epoch = loader.epoch({}, 2);
    ASSERT_EQ(epoch.num_minibatches(), static_cast<std::int64_t>(expected.size()));
    std::size_t k = 0;
    while (auto mb = epoch.next()) {
      ASSERT_TRUE(mb->link.has_value());
      ASSERT_LT(k, expected.size());
      EXPECT_EQ(sampler::digest(mb->batch, *mb->link), expected[k])
          << "minibatch " << k << ", bulk " << bulk;
      EXPECT_EQ(std::vector<vertex_t>(mb->batch.seeds.begin(), mb->batch.seeds.end()),
                mb->link->nodes);
      const auto rows = mb->input_features();
      for (std::int64_t r = 0; r < rows.rows; ++r)
        EXPECT_EQ(rows.data[static_cast<std::size_t>(r * rows.cols)],
                  static_cast<float>(mb->batch.input_nodes[static_cast<std::size_t>(r)]));
      ++k;
    }
    EXPECT_EQ(k, expected.size());
  }
}

TEST(LinkLoader, RefusesSeedsAndImpossibleNegativesByName) {
  const link_fixture f;
  sampler::bulk_sampler nodes(f.graph.view(), sage);
  minibatch_loader loader(f.graph_source_of(), nodes, f.task(), {.batch_size = batch});
  const std::vector<vertex_t> seeds{1, 2};
  try {
    std::ignore = loader.epoch(seeds, 0);
    ADD_FAILURE() << "accepted seeds";
  } catch (const option_error& e) {
    EXPECT_NE(std::string(e.what()).find("without seeds"), std::string::npos) << e.what();
  }
  EXPECT_THROW(minibatch_loader(f.graph_source_of(), nodes,
                                f.task({.mode = sampler::negative_mode::triplet, .amount = 0.5}),
                                {.batch_size = batch}),
               option_error);
}

// Per block level, each destination's sampled sources, in global ids (every
// layer's sources are a prefix of input_nodes, destinations first).
using block_rows = std::vector<std::map<vertex_t, std::vector<vertex_t>>>;

block_rows rows_of(const sampler::minibatch& mb) {
  block_rows levels;
  const auto global = [&](vertex_t local) {
    return mb.input_nodes[static_cast<std::size_t>(local)];
  };
  for (const auto& block : mb.blocks) {
    auto& level = levels.emplace_back();
    const auto view = block.view();
    for (vertex_t r = 0; r < view.rows; ++r) {
      auto& sources = level[global(r)];
      for (const auto c : view.row(r)) sources.push_back(global(c));
      std::ranges::sort(sources);
    }
  }
  return levels;
}

// The global (source, target, label) of every scored pair of a minibatch.
std::multiset<std::tuple<vertex_t, vertex_t, float>> pairs_of(const sampler::link_seeds& s) {
  std::multiset<std::tuple<vertex_t, vertex_t, float>> pairs;
  for (std::size_t i = 0; i < s.label_source.size(); ++i)
    pairs.emplace(s.global(s.label_source[i]), s.global(s.label_target[i]),
                  s.edge_label.empty() ? 1.0f : s.edge_label[i]);
  const auto per = s.negative_target.empty() ? 0 : s.negative_target.size() / s.input_id.size();
  for (std::size_t k = 0; k < s.negative_target.size(); ++k)
    pairs.emplace(s.global(s.label_source[k / per]), s.global(s.negative_target[k]), 0.0f);
  return pairs;
}

// Data-parallel ranks each load a slice of every minibatch: together the
// slices hold the whole minibatch's pairs once, and each slice's blocks are
// the whole's rows for its endpoints (the whole minibatch's edges left out),
// whether its destinations draw alone (sage) or a slice is cut from the whole
// minibatch (LADIES, whose draw spans the minibatch's frontier; LABOR-*,
// whose importances do).
class LinkSlices : public ::testing::TestWithParam<sampler::sampler_options> {};

INSTANTIATE_TEST_SUITE_P(
    Samplers, LinkSlices,
    ::testing::Values(sage,
                      sampler::sampler_options{.kind = "ladies", .fanouts = {64, 64}, .seed = 7},
                      sampler::sampler_options{.kind = "labor-star", .fanouts = {4, 4}, .seed = 7}),
    [](const auto& info) {
      auto name = info.param.kind;
      std::ranges::replace(name, '-', '_');
      return name;
    });

TEST_P(LinkSlices, SlicesOfAMinibatchTogetherAreTheWholeMinibatch) {
  const link_fixture f;
  // Batches of 2 give the third slice no positive (binary: one of the three
  // negatives; triplet: nothing at all).
  for (const auto& [negatives, batch_size] :
       {std::pair{sampler::negative_sampling{.amount = 1.5}, batch},
        std::pair{sampler::negative_sampling{.mode = sampler::negative_mode::triplet, .amount = 2},
                  batch},
        std::pair{sampler::negative_sampling{.amount = 1.5}, std::int64_t{2}},
        std::pair{sampler::negative_sampling{.mode = sampler::negative_mode::triplet, .amount = 2},
                  std::int64_t{2}}}) {
    const auto load = [&](int slice, int slices) {
      sampler::bulk_sampler nodes(f.graph.view(), GetParam());
      minibatch_loader loader(f.graph_source_of(), nodes, f.task(negatives),
                              {.batch_size = batch_size,
                               .bulk = 3,
                               .max_minibatches = 30,
                               .slice = slice,
                               .slices = slices});
      std::vector<loader::ready_minibatch> all;
      auto epoch = loader.epoch({}, 1);
      while (auto mb = epoch.next()) all.push_back(std::move(*mb));
      return all;
    };
    const auto whole = load(0, 1);
    constexpr int slices = 3;
    std::vector<std::vector<loader::ready_minibatch>> parts;
    for (int k = 0; k < slices; ++k) parts.push_back(load(k, slices));
    for (std::size_t j = 0; j < whole.size(); ++j) {
      const auto& w = *whole[j].link;
      auto expected_pairs = pairs_of(w);
      const auto whole_rows = rows_of(whole[j].batch);
      std::vector<std::int64_t> input_ids;
      std::int64_t pairs = 0;
      for (int k = 0; k < slices; ++k) {
        ASSERT_EQ(parts[k].size(), whole.size());
        const auto& part = parts[k][j];
        const auto& s = *part.link;
        EXPECT_EQ(s.index, w.index);
        EXPECT_EQ(s.minibatch_pairs, w.pairs());
        pairs += s.pairs();
        input_ids.insert(input_ids.end(), s.input_id.begin(), s.input_id.end());
        for (const auto& pair : pairs_of(s)) {
          const auto found = expected_pairs.find(pair);
          ASSERT_NE(found, expected_pairs.end()) << "minibatch " << j << " slice " << k;
          expected_pairs.erase(found);
        }
        const auto part_rows = rows_of(part.batch);
        ASSERT_EQ(part_rows.size(), whole_rows.size());
        for (std::size_t level = 0; level < part_rows.size(); ++level)
          for (const auto& [destination, sources] : part_rows[level]) {
            const auto in_whole = whole_rows[level].find(destination);
            ASSERT_NE(in_whole, whole_rows[level].end());
            EXPECT_EQ(sources, in_whole->second)
                << "minibatch " << j << " slice " << k << " level " << level;
          }
      }
      EXPECT_TRUE(expected_pairs.empty()) << "minibatch " << j;
      EXPECT_EQ(pairs, w.pairs());
      EXPECT_EQ(input_ids, w.input_id);
    }
  }
}

}  // namespace
}  // namespace bulkgnn::loader
