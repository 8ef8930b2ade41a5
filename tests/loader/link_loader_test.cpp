// A link loader (minibatch_loader with a link_task): the pipeline hands out
// sample_links' minibatches in order, with their supervision and the
// features of their input nodes, for any bulk size, queue depth and thread
// count.
#include "bulkgnn/loader/loader.hpp"

#include "bulkgnn/core/error.hpp"
#include "bulkgnn/core/parallel.hpp"
#include "test_graphs.hpp"

#include <gtest/gtest.h>

#include <set>
#include <string>

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

TEST(LinkLoader, RefusesSeedsSlicesAndAShardedGraphByName) {
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
  EXPECT_THROW(minibatch_loader(f.graph_source_of(), nodes, f.task(),
                                {.batch_size = batch, .slice = 0, .slices = 2}),
               option_error);
  EXPECT_THROW(minibatch_loader(f.graph_source_of(), nodes,
                                f.task({.mode = sampler::negative_mode::triplet, .amount = 0.5}),
                                {.batch_size = batch}),
               option_error);
}

}  // namespace
}  // namespace bulkgnn::loader
