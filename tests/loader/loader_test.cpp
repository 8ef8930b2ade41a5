#include "bulkgnn/loader/loader.hpp"

#include "bulkgnn/core/error.hpp"
#include "bulkgnn/core/parallel.hpp"
#include "bulkgnn/loader/feature_normalization.hpp"
#include "bulkgnn/loader/host_to_device.hpp"
#include "bulkgnn/sampler/clusters.hpp"
#include "test_graphs.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <memory>
#include <numeric>
#include <tuple>

namespace bulkgnn::loader {
namespace {

// A graph with features f(v, c) = v + c / 100 and labels v % 5, so gathered
// rows can be checked against their vertex ids.
struct fixture_data {
  csr_matrix graph = testing::random_graph(3000, 7);
  std::int64_t feature_columns = 6;
  std::vector<float> features;
  std::vector<std::int32_t> labels;
  std::vector<vertex_t> train;

  fixture_data() {
    features.resize(graph.rows * feature_columns);
    for (std::int64_t v = 0; v < graph.rows; ++v)
      for (std::int64_t c = 0; c < feature_columns; ++c)
        features[v * feature_columns + c] = static_cast<float>(v) + static_cast<float>(c) / 100;
    labels.resize(graph.rows);
    for (std::int64_t v = 0; v < graph.rows; ++v) labels[v] = static_cast<std::int32_t>(v % 5);
    for (vertex_t v = 0; v < graph.rows; v += 3) train.push_back(v);
  }

  [[nodiscard]] graph_source source() const {
    return {graph.view(), {graph.rows, feature_columns, features}, labels};
  }
};

sampler::sampler_options node_wise_options() {
  return {.kind = "sage", .fanouts = {5, 3}, .seed = 11};
}

// Digests of every minibatch of one epoch, straight from the sampler.
std::vector<std::uint64_t> direct_digests(const fixture_data& d, sampler::sampler_options s,
                                          std::int64_t batch_size, std::uint32_t epoch) {
  sampler::bulk_sampler sampler(d.graph.view(), s);
  const sampler::epoch_plan plan(d.train, batch_size, s.seed, epoch);
  const auto bulk = sampler.sample(plan, 0, plan.num_minibatches());
  std::vector<std::uint64_t> digests;
  for (std::int64_t j = 0; j < bulk.count(); ++j) digests.push_back(bulk.digest(j));
  return digests;
}

class loader_orders : public ::testing::TestWithParam<std::tuple<int, int, int>> {};

TEST_P(loader_orders, same_minibatches_in_order_for_any_bulk_and_queue_depth) {
  const auto [bulk, queue, threads] = GetParam();
  const thread_limit limit(threads);
  const fixture_data d;
  const loader_options options{
      .batch_size = 64, .bulk = bulk, .bulk_queue = queue, .ready_queue = queue};
  sampler::bulk_sampler sampler(d.graph.view(), node_wise_options());
  sampler::bulk_sampler reference_sampler(d.graph.view(), node_wise_options());
  minibatch_loader loader(d.source(), sampler, options);
  minibatch_loader reference_loader(d.source(), reference_sampler,
                                    {.batch_size = 64, .bulk = 1000});
  auto stream = loader.epoch(d.train, 3);
  auto reference = reference_loader.epoch(d.train, 3);
  std::int64_t index = 0;
  while (auto mb = stream.next()) {
    auto expected = reference.next();
    ASSERT_TRUE(expected.has_value());
    EXPECT_EQ(mb->batch.index, index++);
    EXPECT_EQ(mb->batch.seeds, expected->batch.seeds);
    EXPECT_EQ(mb->batch.input_nodes, expected->batch.input_nodes);
    EXPECT_EQ(sampler::digest(mb->batch), sampler::digest(expected->batch));
  }
  EXPECT_FALSE(reference.next().has_value());
  EXPECT_EQ(index, stream.num_minibatches());
  EXPECT_EQ(index, sampler::minibatch_count(static_cast<std::int64_t>(d.train.size()), 64));
}

INSTANTIATE_TEST_SUITE_P(bulk_queue_threads, loader_orders,
                         ::testing::Values(std::tuple{1, 1, 1}, std::tuple{3, 2, 2},
                                           std::tuple{7, 1, 2}, std::tuple{64, 4, 1}));

TEST(loader, minibatches_match_the_sampler_and_carry_gathered_features_and_labels) {
  const fixture_data d;
  const auto s = node_wise_options();
  sampler::bulk_sampler loader_sampler(d.graph.view(), s);
  minibatch_loader loader(d.source(), loader_sampler, {.batch_size = 100, .bulk = 4});
  sampler::bulk_sampler sampler(d.graph.view(), s);
  const sampler::epoch_plan plan(d.train, 100, s.seed, 0);
  const auto bulk = sampler.sample(plan, 0, plan.num_minibatches());
  auto stream = loader.epoch(d.train, 0);
  std::int64_t j = 0;
  while (auto mb = stream.next()) {
    const auto expected = bulk.extract(j++, d.labels);
    EXPECT_EQ(mb->batch.seeds, expected.seeds);
    EXPECT_EQ(mb->batch.labels, expected.labels);
    ASSERT_EQ(mb->batch.blocks.size(), expected.blocks.size());
    for (std::size_t b = 0; b < expected.blocks.size(); ++b) {
      EXPECT_EQ(mb->batch.blocks[b].indptr, expected.blocks[b].indptr);
      EXPECT_EQ(mb->batch.blocks[b].indices, expected.blocks[b].indices);
    }
    const auto x = mb->input_features();
    ASSERT_EQ(x.rows, static_cast<std::int64_t>(mb->batch.input_nodes.size()));
    ASSERT_EQ(x.cols, d.feature_columns);
    for (std::int64_t i = 0; i < x.rows; ++i)
      for (std::int64_t c = 0; c < x.cols; ++c)
        ASSERT_EQ(x.row(i)[c], d.features[mb->batch.input_nodes[i] * d.feature_columns + c]);
    for (std::size_t i = 0; i < mb->batch.seeds.size(); ++i)
      EXPECT_EQ(mb->batch.labels[i], mb->batch.seeds[i] % 5);
  }
  EXPECT_EQ(j, plan.num_minibatches());
}

TEST(loader, minibatch_digests_equal_the_bulk_digests) {
  const fixture_data d;
  const auto s = node_wise_options();
  sampler::bulk_sampler sampler(d.graph.view(), s);
  minibatch_loader loader(d.source(), sampler, {.batch_size = 100, .bulk = 3});
  const auto expected = direct_digests(d, s, 100, 2);
  auto stream = loader.epoch(d.train, 2);
  std::size_t j = 0;
  while (auto mb = stream.next()) {
    ASSERT_LT(j, expected.size());
    EXPECT_EQ(sampler::digest(mb->batch), expected[j++]);
  }
  EXPECT_EQ(j, expected.size());
}

// A byte bound changes how much waits in the queues, never what comes out:
// a bound below any one item lets one item through at a time.
TEST(loader, byte_bounds_change_nothing_but_how_much_is_queued) {
  const fixture_data d;
  sampler::bulk_sampler reference_sampler(d.graph.view(), node_wise_options());
  minibatch_loader reference_loader(d.source(), reference_sampler,
                                    {.batch_size = 32, .bulk = 1000});
  auto reference = reference_loader.epoch(d.train, 2);
  std::vector<std::uint64_t> expected;
  std::size_t largest = 0;
  while (auto mb = reference.next()) {
    expected.push_back(sampler::digest(mb->batch));
    largest = std::max(largest, mb->size_bytes());
  }
  for (const std::int64_t bound : {std::int64_t{1}, std::int64_t{40'000}, std::int64_t{1} << 30}) {
    SCOPED_TRACE(bound);
    sampler::bulk_sampler sampler(d.graph.view(), node_wise_options());
    minibatch_loader loader(d.source(), sampler,
                            {.batch_size = 32, .bulk = 3, .ready_queue = 64, .queue_bytes = bound});
    auto stream = loader.epoch(d.train, 2);
    std::vector<std::uint64_t> digests;
    while (auto mb = stream.next()) digests.push_back(sampler::digest(mb->batch));
    EXPECT_EQ(digests, expected);
    const auto ready = stream.report().stages[2].peak_output_bytes;  // gather's output
    EXPECT_GT(ready, 0u);
    EXPECT_LE(ready, std::max(static_cast<std::size_t>(bound), largest));
    // The sample stage's bulks are bounded the same way.
    EXPECT_GT(stream.report().stages[1].peak_output_bytes, 0u);
  }
}

// How the stages' busy times compare with the epoch's (overlap) is measured by
// benchmarks/peers/loader_throughput, not asserted here: it depends on load.
TEST(loader, report_counts_every_stage_and_times_the_working_ones) {
  const fixture_data d;
  sampler::bulk_sampler sampler(d.graph.view(), node_wise_options());
  minibatch_loader loader(d.source(), sampler, {.batch_size = 50, .bulk = 5});
  auto stream = loader.epoch(d.train, 1);
  std::int64_t n = 0;
  while (auto mb = stream.next()) ++n;
  const auto report = stream.report();
  ASSERT_EQ(report.stages.size(), 4u);
  EXPECT_EQ(report.stages[0].name, "shuffle");
  EXPECT_EQ(report.stages[0].items, 1);
  EXPECT_EQ(report.stages[1].items, (n + 4) / 5);
  EXPECT_EQ(report.stages[2].items, n);
  EXPECT_EQ(report.stages[3].items, n);
  // Sampling and gathering did work, so their stopwatches ran.
  EXPECT_GT(report.stages[1].busy_seconds, 0);
  EXPECT_GT(report.stages[2].busy_seconds, 0);
  EXPECT_GT(report.seconds, 0);
}

// Stands in for the stage a device build inserts between gather and the
// consumer: hands every minibatch on untouched and counts them.
class pass_through_stage final : public stage {
 public:
  [[nodiscard]] std::string name() const override { return "host_to_device"; }
  bool process(stage_item item, stage_context& context) override {
    context.add_busy(0);
    return context.emit(std::move(item));
  }
};

TEST(loader, a_host_to_device_stage_changes_nothing_but_the_report) {
  const fixture_data d;
  const loader_options plain{.batch_size = 50, .bulk = 5};
  loader_options with_slot = plain;
  with_slot.host_to_device = [] { return std::make_unique<pass_through_stage>(); };
  sampler::bulk_sampler sampler(d.graph.view(), node_wise_options());
  sampler::bulk_sampler slotted_sampler(d.graph.view(), node_wise_options());
  minibatch_loader loader(d.source(), sampler, plain);
  minibatch_loader slotted(d.source(), slotted_sampler, with_slot);
  auto stream = loader.epoch(d.train, 4);
  auto slotted_stream = slotted.epoch(d.train, 4);
  std::int64_t n = 0;
  while (auto mb = stream.next()) {
    auto other = slotted_stream.next();
    ASSERT_TRUE(other.has_value());
    EXPECT_EQ(other->batch.index, mb->batch.index);
    EXPECT_EQ(sampler::digest(other->batch), sampler::digest(mb->batch));
    const auto x = mb->input_features();
    const auto y = other->input_features();
    ASSERT_EQ(y.rows, x.rows);
    ASSERT_EQ(y.cols, x.cols);
    for (std::int64_t i = 0; i < x.rows; ++i)
      for (std::int64_t c = 0; c < x.cols; ++c) ASSERT_EQ(y.row(i)[c], x.row(i)[c]);
    ++n;
  }
  EXPECT_FALSE(slotted_stream.next().has_value());
  const auto report = slotted_stream.report();
  ASSERT_EQ(report.stages.size(), 5u);
  const char* names[] = {"shuffle", "sample", "gather", "host_to_device", "consume"};
  for (std::size_t s = 0; s < 5; ++s) EXPECT_EQ(report.stages[s].name, names[s]);
  EXPECT_EQ(report.stages[3].items, n);
  EXPECT_EQ(report.stages[4].items, n);
  EXPECT_EQ(stream.report().stages.size(), 4u);
}

// The real stage with a host executor: every array copied, features moved
// out of the pool's buffer, nothing else changed.
TEST(loader, the_host_to_device_stage_copies_every_array) {
  const fixture_data d;
  const loader_options plain{.batch_size = 50, .bulk = 5};
  loader_options copying = plain;
  copying.host_to_device = [] { return make_host_to_device_stage(executor(backend::cpu)); };
  sampler::bulk_sampler sampler(d.graph.view(), node_wise_options());
  sampler::bulk_sampler copying_sampler(d.graph.view(), node_wise_options());
  minibatch_loader loader(d.source(), sampler, plain);
  minibatch_loader copied(d.source(), copying_sampler, copying);
  auto stream = loader.epoch(d.train, 2);
  auto copied_stream = copied.epoch(d.train, 2);
  while (auto mb = stream.next()) {
    auto other = copied_stream.next();
    ASSERT_TRUE(other.has_value());
    EXPECT_EQ(sampler::digest(other->batch), sampler::digest(mb->batch));
    EXPECT_EQ(other->batch.labels, mb->batch.labels);
    EXPECT_EQ(other->batch.seeds, mb->batch.seeds);
    EXPECT_TRUE(other->features.empty());
    const auto x = mb->input_features();
    const auto y = other->input_features();
    EXPECT_EQ(y.data.data(), other->placed_features.data());
    ASSERT_EQ(y.rows, x.rows);
    ASSERT_EQ(y.cols, x.cols);
    EXPECT_TRUE(std::equal(x.data.begin(), x.data.end(), y.data.begin(), y.data.end()));
  }
  EXPECT_FALSE(copied_stream.next().has_value());
  EXPECT_EQ(copied_stream.report().stages[3].name, "host_to_device");
}

// Serves a table's rows; once placed, it writes them doubled into its
// placed memory (host memory here), standing for rows normalised on the way
// from another GPU.
class table_fetcher final : public feature_fetcher {
 public:
  explicit table_fetcher(const fixture_data& d) : d_(d) {}
  [[nodiscard]] std::int64_t columns() const override { return d_.feature_columns; }
  void fetch(std::span<const vertex_t> vertices, dense_view<float> out) override {
    ++fetches;
    copy_rows(vertices, out, 1);
  }
  bool place_on_device(const executor&, const row_normalizer*) override {
    placed_ = true;
    return true;
  }
  [[nodiscard]] memory_resource* placed_memory() const override {
    return placed_ ? &host_memory() : nullptr;
  }
  void fetch_placed(std::span<const vertex_t> vertices, dense_view<float> out) override {
    ++placed_fetches;
    copy_rows(vertices, out, 2);
  }
  std::int64_t fetches = 0;
  std::int64_t placed_fetches = 0;

 private:
  void copy_rows(std::span<const vertex_t> vertices, dense_view<float> out, float scale) const {
    for (std::size_t i = 0; i < vertices.size(); ++i)
      for (std::int64_t c = 0; c < d_.feature_columns; ++c)
        out.row(static_cast<std::int64_t>(i))[c] =
            scale * d_.features[vertices[i] * d_.feature_columns + c];
  }
  const fixture_data& d_;
  bool placed_ = false;
};

// Rows a fetcher moved GPU to GPU go straight into placed_features: neither
// normalised again by the gather stage nor copied by the host_to_device one.
TEST(loader, placed_fetches_land_in_placed_features_as_fetched) {
  const fixture_data d;
  table_fetcher fetcher(d);
  const row_normalizer normalizer(d.source().features);
  graph_source source{.graph = d.graph.view(),
                      .features = {},
                      .labels = d.labels,
                      .rows = nullptr,
                      .remote_features = &fetcher,
                      .normalizer = &normalizer};
  loader_options options{.batch_size = 50, .bulk = 5};
  options.host_to_device = [] { return make_host_to_device_stage(executor(backend::cpu)); };
  ASSERT_TRUE(fetcher.place_on_device(executor(backend::cpu), &normalizer));
  sampler::bulk_sampler sampler(d.graph.view(), node_wise_options());
  minibatch_loader loader(source, sampler, options);
  auto stream = loader.epoch(d.train, 1);
  std::int64_t n = 0;
  while (auto mb = stream.next()) {
    ++n;
    EXPECT_TRUE(mb->features.empty());
    const auto x = mb->input_features();
    ASSERT_EQ(x.data.data(), mb->placed_features.data());
    ASSERT_EQ(x.rows, static_cast<std::int64_t>(mb->batch.input_nodes.size()));
    for (std::int64_t i = 0; i < x.rows; ++i)
      for (std::int64_t c = 0; c < x.cols; ++c)
        ASSERT_EQ(x.row(i)[c], 2 * d.features[mb->batch.input_nodes[i] * d.feature_columns + c]);
  }
  EXPECT_GT(n, 0);
  EXPECT_EQ(fetcher.placed_fetches, n);
  EXPECT_EQ(fetcher.fetches, 0);
}

TEST(loader, max_minibatches_stops_the_epoch_early) {
  const fixture_data d;
  sampler::bulk_sampler sampler(d.graph.view(), node_wise_options());
  minibatch_loader loader(d.source(), sampler, {.batch_size = 10, .bulk = 3, .max_minibatches = 7});
  auto stream = loader.epoch(d.train, 0);
  std::int64_t n = 0;
  while (auto mb = stream.next()) ++n;
  EXPECT_EQ(n, 7);
  const double consumed = stream.report().stages[3].busy_seconds;
  EXPECT_FALSE(stream.next().has_value());  // stays exhausted, and its report complete
  EXPECT_EQ(stream.report().stages[3].busy_seconds, consumed);
}

// A graph whose rows cannot be read: the sample stage fails on it.
class unreadable_rows final : public sampler::row_source {
 public:
  explicit unreadable_rows(vertex_t n) : n_(n) {}
  vertex_t num_vertices() const override { return n_; }
  bool weighted() const override { return false; }
  sampler::gathered_rows rows(std::span<const vertex_t>) override {
    throw error("unreadable_rows: no row can be read");
  }

 private:
  vertex_t n_;
};

TEST(loader, a_failing_stage_is_rethrown_to_the_consumer) {
  const fixture_data d;
  unreadable_rows rows(static_cast<vertex_t>(d.graph.rows));
  sampler::bulk_sampler sampler(rows, node_wise_options());
  minibatch_loader loader(d.source(), sampler, {.batch_size = 64});
  auto stream = loader.epoch(d.train, 0);
  EXPECT_THROW(
      {
        while (stream.next()) {
        }
      },
      error);
}

TEST(loader, destroying_a_stream_early_stops_its_stages) {
  const fixture_data d;
  sampler::bulk_sampler sampler(d.graph.view(), node_wise_options());
  minibatch_loader loader(d.source(), sampler,
                          {.batch_size = 8, .bulk = 2, .bulk_queue = 1, .ready_queue = 1});
  for (std::uint32_t epoch = 0; epoch < 3; ++epoch) {
    auto stream = loader.epoch(d.train, epoch);
    ASSERT_TRUE(stream.next().has_value());
  }
}

// Cluster-GCN: the loader hands out the clustered plan's minibatches in
// order, bulk by bulk, each as the sampler draws it; the clusters go only
// with a sampler that batches them.
TEST(loader, batches_of_clusters_are_the_clustered_plans_minibatches) {
  const fixture_data d;
  std::vector<std::int32_t> cluster_of(static_cast<std::size_t>(d.graph.rows));
  for (vertex_t v = 0; v < d.graph.rows; ++v) cluster_of[v] = static_cast<std::int32_t>(v % 60);
  const auto clusters =
      std::make_shared<const sampler::vertex_clusters>(d.graph.view(), cluster_of, 60);
  const sampler::sampler_options options{.kind = "cluster-gcn", .fanouts = {-1, -1}, .seed = 3};
  sampler::bulk_sampler sampler(d.graph.view(), options);
  const sampler::epoch_plan plan(d.train, 7, options.seed, 2, clusters);
  const auto bulk = sampler.sample(plan, 0, plan.num_minibatches());
  minibatch_loader loader(d.source(), sampler, {.batch_size = 7, .subgraphs = clusters, .bulk = 3});
  auto stream = loader.epoch(d.train, 2);
  EXPECT_EQ(stream.num_minibatches(), sampler::minibatch_count(d.train, 7, clusters.get()));
  std::int64_t j = 0;
  while (auto mb = stream.next()) {
    ASSERT_LT(j, bulk.count());
    EXPECT_EQ(std::vector<vertex_t>(mb->batch.seeds.begin(), mb->batch.seeds.end()),
              std::vector<vertex_t>(plan.seeds(j).begin(), plan.seeds(j).end()));
    EXPECT_EQ(sampler::digest(mb->batch), bulk.digest(j++));
  }
  EXPECT_EQ(j, plan.num_minibatches());

  EXPECT_THROW(minibatch_loader(d.source(), sampler, {}), option_error);
  sampler::bulk_sampler sage(d.graph.view(), node_wise_options());
  EXPECT_THROW(minibatch_loader(d.source(), sage, {.subgraphs = clusters}), option_error);
}

TEST(loader, rejects_impossible_options_and_inputs) {
  const fixture_data d;
  sampler::bulk_sampler sampler(d.graph.view(), node_wise_options());
  EXPECT_THROW(minibatch_loader(d.source(), sampler, {.batch_size = 0}), option_error);
  EXPECT_THROW(minibatch_loader(d.source(), sampler, {.bulk = 0}), option_error);
  EXPECT_THROW(minibatch_loader(d.source(), sampler, {.ready_queue = 0}), option_error);
  EXPECT_THROW(minibatch_loader(d.source(), sampler, {.queue_bytes = -1}), option_error);
  minibatch_loader loader(d.source(), sampler, {});
  const std::vector<vertex_t> bad{0, 5000};
  EXPECT_THROW(std::ignore = loader.epoch(bad, 0), option_error);
  auto stream = loader.epoch(d.train, 0);
  EXPECT_THROW(std::ignore = loader.epoch(d.train, 1), option_error);
}

}  // namespace
}  // namespace bulkgnn::loader
