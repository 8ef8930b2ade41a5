#include "bulkgnn/loader/stages.hpp"

#include "bulkgnn/core/buffer_pool.hpp"
#include "bulkgnn/sampler/epoch_plan.hpp"
#include "test_graphs.hpp"

#include <gtest/gtest.h>

#include <numeric>
#include <vector>

// Each stage of the loader's pipeline alone, driven through a context that
// records what it emits: what a loader composes is what these test.
namespace bulkgnn::loader {
namespace {

class recording_context final : public stage_context {
 public:
  bool emit(stage_item item) override {
    items.push_back(std::move(item));
    return items.size() < refuse_after;
  }
  void add_busy(double seconds, std::int64_t count) override {
    busy_seconds += seconds;
    busy_items += count;
  }

  std::vector<stage_item> items;
  std::size_t refuse_after = std::size_t(-1);
  double busy_seconds = 0;
  std::int64_t busy_items = 0;
};

std::vector<vertex_t> every_third_vertex(std::int64_t n) {
  std::vector<vertex_t> seeds;
  for (vertex_t v = 0; v < n; v += 3) seeds.push_back(v);
  return seeds;
}

TEST(ShuffleStage, CutsTheEpochIntoBulkRequestsOverOnePlan) {
  const auto seeds = every_third_vertex(1000);  // 334 seeds: 11 minibatches of 32
  shuffle_stage shuffle(32, 4, 7);
  recording_context context;
  ASSERT_TRUE(shuffle.process(epoch_start{seeds, 3, 11}, context));
  ASSERT_EQ(context.items.size(), 3u);  // 4 + 4 + 3
  const sampler::epoch_plan expected(seeds, 32, 7, 3);
  for (std::size_t i = 0; i < context.items.size(); ++i) {
    const auto& request = std::get<bulk_request>(context.items[i]);
    EXPECT_EQ(request.first, static_cast<std::int64_t>(4 * i));
    EXPECT_EQ(request.count, i < 2 ? 4 : 3);
    EXPECT_EQ(request.plan, std::get<bulk_request>(context.items[0]).plan);  // one shuffle
    for (std::int64_t j = 0; j < expected.num_minibatches(); ++j) {
      const auto got = request.plan->seeds(j);
      const auto want = expected.seeds(j);
      ASSERT_TRUE(std::equal(got.begin(), got.end(), want.begin(), want.end())) << j;
    }
  }
  // Fewer minibatches than the plan has (max_minibatches): only those.
  recording_context limited;
  ASSERT_TRUE(shuffle.process(epoch_start{seeds, 3, 5}, limited));
  ASSERT_EQ(limited.items.size(), 2u);
  EXPECT_EQ(std::get<bulk_request>(limited.items[1]).count, 1);
}

TEST(ShuffleStage, StopsAtTheFirstRefusedEmit) {
  const auto seeds = every_third_vertex(1000);
  shuffle_stage shuffle(32, 4, 7);
  recording_context context;
  context.refuse_after = 1;
  EXPECT_FALSE(shuffle.process(epoch_start{seeds, 0, 11}, context));
  EXPECT_EQ(context.items.size(), 1u);
}

TEST(SampleStage, EmitsWhatTheSamplerDrawsForItsSlice) {
  const auto graph = testing::random_graph(500, 6);
  const sampler::sampler_options options{.kind = "sage", .fanouts = {4, 3}, .seed = 2};
  sampler::bulk_sampler staged(graph.view(), options);
  sampler::bulk_sampler direct(graph.view(), options);
  const auto seeds = every_third_vertex(500);
  const auto plan = std::make_shared<const sampler::epoch_plan>(seeds, 16, 2, 1);
  for (const int slice : {0, 1}) {
    sample_stage stage(staged, {.slice = slice, .slices = 2});
    recording_context context;
    ASSERT_TRUE(stage.process(bulk_request{plan, 2, 3}, context));
    ASSERT_EQ(context.items.size(), 1u);
    const auto& bulk = *std::get<std::shared_ptr<sampler::bulk_sample>>(context.items[0]);
    const auto expected = direct.sample_slices(*plan, 2, 3, {.slice = slice, .slices = 2});
    ASSERT_EQ(bulk.count(), 3);
    for (std::int64_t j = 0; j < 3; ++j) EXPECT_EQ(bulk.digest(j), expected.digest(j)) << j;
    EXPECT_EQ(context.busy_items, 1);
  }
}

TEST(GatherStage, HandsOnEachMinibatchWithTheRowsOfItsInputVertices) {
  const auto graph = testing::random_graph(400, 5);
  const std::int64_t columns = 3;
  std::vector<float> features(static_cast<std::size_t>(graph.rows * columns));
  std::iota(features.begin(), features.end(), 0.0f);  // row v holds 3v, 3v + 1, 3v + 2
  std::vector<std::int32_t> labels(static_cast<std::size_t>(graph.rows));
  for (std::size_t v = 0; v < labels.size(); ++v) labels[v] = static_cast<std::int32_t>(v % 4);
  const graph_source source{graph.view(), {graph.rows, columns, features}, labels};
  sampler::bulk_sampler sampler(graph.view(), {.kind = "sage", .fanouts = {3}, .seed = 4});
  const auto seeds = every_third_vertex(400);
  const sampler::epoch_plan plan(seeds, 20, 4, 0);
  auto bulk = std::make_shared<sampler::bulk_sample>(sampler.sample(plan, 0, 3));

  buffer_pool<float> buffers(2, host_memory());
  gather_stage gather(source, buffers, executor{});
  recording_context context;
  ASSERT_TRUE(gather.process(bulk, context));
  ASSERT_EQ(context.items.size(), 3u);
  for (std::size_t j = 0; j < 3; ++j) {
    const auto& mb = std::get<ready_minibatch>(context.items[j]);
    EXPECT_EQ(mb.batch.index, static_cast<std::int64_t>(j));
    ASSERT_EQ(mb.feature_columns, columns);
    const auto x = mb.input_features();
    ASSERT_EQ(x.rows, static_cast<std::int64_t>(mb.batch.input_nodes.size()));
    for (std::int64_t i = 0; i < x.rows; ++i)
      for (std::int64_t c = 0; c < columns; ++c)
        ASSERT_EQ(x.row(i)[c], static_cast<float>(mb.batch.input_nodes[i] * columns + c));
    for (std::size_t s = 0; s < mb.batch.seeds.size(); ++s)
      EXPECT_EQ(mb.batch.labels[s], labels[mb.batch.seeds[s]]);
  }
  EXPECT_EQ(context.busy_items, 3);
}

}  // namespace
}  // namespace bulkgnn::loader
