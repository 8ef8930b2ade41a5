// Every full-batch grid against the process alone, on every rank count the
// test runs with: products, gradients, bytes and whole training runs.
#include "bulkgnn/comm/mpi_communicator.hpp"
#include "bulkgnn/comm/self_communicator.hpp"
#include "bulkgnn/fullbatch/closed_forms.hpp"
#include "bulkgnn/fullbatch/distributed_aggregation.hpp"
#include "bulkgnn/fullbatch/full_batch_training.hpp"
#include "bulkgnn/kernels/spmm.hpp"
#include "bulkgnn/trainer/model.hpp"
#include "full_batch_support.hpp"
#include "small_csbm.hpp"

#include <gtest/gtest.h>
#include <mpi.h>

#include <array>
#include <cmath>
#include <random>
#include <set>

namespace bulkgnn::fullbatch {
namespace {

using testing::every_vertex;
using testing::grids_for;
using testing::random_graph;
using testing::whole_normalised;

std::string name_of(grid_kind kind, int c) {
  return fmt::format("{} c={}", grid_kind_name(kind), c);
}

trainer::matrix random_rows(std::int64_t rows, std::int64_t cols, std::uint64_t seed) {
  std::mt19937_64 gen(seed);
  std::uniform_real_distribution<float> value(-1.0f, 1.0f);
  trainer::matrix m(rows, cols);
  for (auto& v : m.data()) v = value(gen);
  return m;
}

// Rows [first, first + count) of m.
std::span<const float> rows_of(const trainer::matrix& m, std::int64_t first, std::int64_t count) {
  return m.data().subspan(static_cast<std::size_t>(first * m.cols()),
                          static_cast<std::size_t>(count * m.cols()));
}

void expect_near_all(std::span<const float> got, std::span<const float> want, float tolerance,
                     const std::string& what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  for (std::size_t i = 0; i < got.size(); ++i)
    ASSERT_NEAR(got[i], want[i], tolerance * (1.0f + std::abs(want[i]))) << what << " at " << i;
}

// This rank's share of an n-vertex graph under the block partition of a
// grid: the partition, its first row and its vertices.
struct rank_share {
  distributed::vertex_partition partition;
  std::int64_t first = 0;
  std::int64_t count = 0;
  std::vector<vertex_t> vertices;
};

rank_share share_of(const grid_layout& layout, int rank, std::int64_t n) {
  rank_share share;
  share.partition = distributed::block_partition(n, layout.parts());
  const int part = layout.part_of_rank(rank);
  share.first = share.partition.part_offsets[part];
  share.count = share.partition.part_size(part);
  for (auto v = share.first; v < share.first + share.count; ++v)
    share.vertices.push_back(static_cast<vertex_t>(v));
  return share;
}

class FullBatchGrids : public ::testing::Test {
 protected:
  FullBatchGrids() : world_(MPI_COMM_WORLD, "world", log_) {}
  comm::traffic_log log_;
  comm::mpi_communicator world_;
};

// The same model on the whole Â in one process and on every grid: the
// logits of each rank's rows, the parameter gradients (summed over one copy
// of each part) and the input gradient agree up to float reordering.
TEST_F(FullBatchGrids, EveryGridGivesTheProcessAlonesLogitsAndGradients) {
  const std::int64_t n = 45;  // parts of unequal sizes on 2, 4 and 8 ranks
  const auto graph = random_graph(n, 6, 11);
  const auto all = every_vertex(n);
  const auto x = random_rows(n, 6, 12);
  const auto grad_logits = random_rows(n, 3, 13);
  for (const auto kind : {trainer::layer_kind::gcn, trainer::layer_kind::sage}) {
    const trainer::model_config config{.kind = kind,
                                       .in_features = 6,
                                       .hidden = 5,
                                       .num_classes = 3,
                                       .layers = 3,
                                       .dropout = 0.3f};
    const kernels::dropout_key key{.seed = 4, .epoch = 2, .minibatch = 0, .row_ids = all};
    // The process alone.
    const auto whole = whole_normalised(graph.view(), kind);
    std::vector<trainer::aggregation_block> whole_blocks(
        3, {.forward = whole, .backward = kernels::transpose(executor{}, whole.view())});
    trainer::gnn_model alone(config, 9);
    trainer::matrix want_logits(n, 3);
    const auto logits = alone.forward(whole_blocks, x.view(), key);
    std::copy(logits.data.begin(), logits.data.end(), want_logits.data().begin());
    alone.backward(grad_logits.view(), true);
    const auto want_gradients = alone.gradients_on_host();
    trainer::matrix want_input(n, 6);
    std::copy(alone.input_gradient().data.begin(), alone.input_gradient().data.end(),
              want_input.data().begin());

    for (const auto& [grid, c] : grids_for(world_.size())) {
      const auto what = fmt::format("{} {}", trainer::layer_kind_name(kind), name_of(grid, c));
      const grid_layout layout(grid, world_.size(), c);
      const auto [partition, first, count, mine] = share_of(layout, world_.rank(), n);
      const auto rows = normalised_rows(graph.view(), mine, partition, kind,
                                        degrees_with_self_loops(graph.view(), all));
      const auto aggregation = make_distributed_aggregation(layout, world_, partition, rows);
      ASSERT_EQ(aggregation->first_row(), first) << what;
      ASSERT_EQ(aggregation->row_count(), count) << what;
      csr_matrix shape;
      shape.rows = shape.cols = count;
      shape.indptr = buffer<edge_t>(static_cast<std::size_t>(count + 1), edge_t{0});
      std::vector<trainer::aggregation_block> blocks(3, {.forward = shape, .backward = shape});
      trainer::gnn_model model(config, 9);
      model.set_aggregation(*aggregation);
      trainer::matrix my_x(count, 6);
      const auto x_rows = rows_of(x, first, count);
      std::copy(x_rows.begin(), x_rows.end(), my_x.data().begin());
      const auto got = model.forward(
          blocks, my_x.view(),
          kernels::dropout_key{.seed = 4, .epoch = 2, .minibatch = 0, .row_ids = mine});
      expect_near_all(got.data, rows_of(want_logits, first, count), 1e-5f, what + " logits");
      trainer::matrix my_grad(count, 3);
      const auto grad_rows = rows_of(grad_logits, first, count);
      std::copy(grad_rows.begin(), grad_rows.end(), my_grad.data().begin());
      model.backward(my_grad.view(), true);
      expect_near_all(model.input_gradient().data, rows_of(want_input, first, count), 1e-5f,
                      what + " input gradient");
      // Sum over one copy of each part: on 1.5d a team's replicas hold the same.
      auto gradients = model.gradients_on_host();
      const auto once = world_.split(layout.replica_of_rank(world_.rank()), world_.rank(), "sums");
      once->all_reduce(std::span<float>(gradients));
      expect_near_all(gradients, want_gradients, 1e-4f, what + " parameter gradients");
    }
  }
}

// The end-of-run check of every training mode: equal weights pass, and one
// rank whose weights differ in one bit makes every rank throw, counting it.
TEST_F(FullBatchGrids, RanksWithOtherWeightsThanRankZeroAreCountedOnEveryRank) {
  std::vector<float> weights{0.25f, -1.5f, 3.0f};
  EXPECT_NO_THROW(trainer::require_same_weights(world_, weights, "test run"));
  if (world_.size() == 1) return;
  if (world_.rank() == world_.size() - 1) weights[1] = std::nextafter(weights[1], 0.0f);
  try {
    trainer::require_same_weights(world_, weights, "test run");
    ADD_FAILURE() << "rank " << world_.rank() << " did not throw";
  } catch (const internal_error& e) {
    EXPECT_STREQ(e.what(), "test run: 1 rank(s) ended with other weights than rank 0");
  }
}

// One product each way moves the bytes of the closed forms, where they are
// exact (equal parts).
TEST_F(FullBatchGrids, ByteCountersEqualTheClosedForms) {
  const std::int64_t n = 48;
  const std::int64_t width = 6;
  const auto graph = random_graph(n, 5, 21);
  const auto all = every_vertex(n);
  for (const auto& [grid, c] : grids_for(world_.size())) {
    const auto what = name_of(grid, c);
    const grid_layout layout(grid, world_.size(), c);
    const auto [partition, first, count, mine] = share_of(layout, world_.rank(), n);
    const auto rows = normalised_rows(graph.view(), mine, partition, trainer::layer_kind::sage, {});
    comm::traffic_log log;
    comm::mpi_communicator world(MPI_COMM_WORLD, "world", log);
    const auto aggregation = make_distributed_aggregation(layout, world, partition, rows);
    const auto x = random_rows(count, width, 3);
    trainer::matrix out(count, width);
    const trainer::aggregation_block unused;
    aggregation->forward(executor{}, 0, unused, x.view(), out.view());
    aggregation->backward(executor{}, 0, unused, x.view(), out.view());
    auto stages = log.all();
    std::array<std::int64_t, 2> sent{stages["forward"].bytes_sent, stages["backward"].bytes_sent};
    world_.all_reduce(std::span<std::int64_t>(sent));
    // SAR's boundary, counted from the whole graph.
    std::int64_t boundary = 0;
    for (int p = 0; p < layout.parts(); ++p) {
      std::vector<std::set<vertex_t>> referenced(static_cast<std::size_t>(layout.parts()));
      for (auto v = partition.part_offsets[p]; v < partition.part_offsets[p + 1]; ++v)
        for (auto e = graph.indptr[v]; e < graph.indptr[v + 1]; ++e)
          referenced[partition.owner[graph.indices[e]]].insert(graph.indices[e]);
      for (int q = 0; q < layout.parts(); ++q)
        if (q != p) boundary += static_cast<std::int64_t>(referenced[q].size());
    }
    const double want = product_bytes(layout, n, width, boundary);
    EXPECT_EQ(static_cast<double>(sent[0]), want) << what << " forward";
    EXPECT_EQ(static_cast<double>(sent[1]), want) << what << " backward";
  }
}

full_batch_options small_run(trainer::layer_kind kind, grid_kind grid, int c) {
  full_batch_options options;
  options.model = {.kind = kind, .hidden = 16, .layers = 2, .dropout = 0.5f};
  options.optimizer = {.lr = 0.01f};
  options.epochs = 3;
  options.eval_every = 1;
  options.seed = 5;
  options.grid = grid;
  options.replication = c;
  options.normalize_features = loader::feature_normalization::row;
  return options;
}

// Whole training runs: every grid ends with the process alone's weights,
// losses and accuracies; an epoch's bytes are the closed forms'.
TEST_F(FullBatchGrids, TrainingOnEveryGridMatchesTheProcessAlone) {
  const bulkgnn::testing::scratch_dir dir;
  const auto ds = bulkgnn::testing::small_csbm(dir, 400);
  const auto data = trainer::whole_dataset(ds);
  for (const auto kind : {trainer::layer_kind::gcn, trainer::layer_kind::sage}) {
    comm::traffic_log alone_log;
    comm::self_communicator self("world", alone_log);
    const auto alone = train_full_batch(data, small_run(kind, grid_kind::one_d, 1), self);
    for (const auto& [grid, c] : grids_for(world_.size())) {
      const auto what = fmt::format("{} {}", trainer::layer_kind_name(kind), name_of(grid, c));
      comm::traffic_log log;
      comm::mpi_communicator world(MPI_COMM_WORLD, "world", log);
      const auto options = small_run(kind, grid, c);
      const auto result = train_full_batch(data, options, world);
      expect_near_all(result.parameters, alone.parameters, 2e-4f, what + " weights");
      for (std::size_t e = 0; e < alone.epochs.size(); ++e) {
        EXPECT_NEAR(result.epochs[e].loss, alone.epochs[e].loss, 1e-5) << what;
        EXPECT_NEAR(*result.epochs[e].valid_acc, *alone.epochs[e].valid_acc, 0.0051) << what;
      }
      const grid_layout layout(grid, world_.size(), c);
      // SAR's boundary is checked against the graph in ByteCountersEqualTheClosedForms.
      if (grid != grid_kind::sar && data.num_nodes % layout.parts() == 0) {
        auto config = options.model;
        config.in_features = data.feature_dim;
        config.num_classes = data.num_classes;
        const auto want =
            predicted_epoch_bytes(layout, data.num_nodes, config, result.parameter_count);
        const auto& got = result.epochs.back().traffic;
        EXPECT_EQ(static_cast<double>(got.at("forward")), want.forward) << what;
        EXPECT_EQ(static_cast<double>(got.at("backward")), want.backward) << what;
        EXPECT_EQ(static_cast<double>(got.at("gradients")), want.gradients) << what;
      }
    }
  }
}

// Compression on the grids whose messages each go to one rank: rate 1 is the
// uncompressed run bit for bit; a fixed rate sends fewer bytes and still
// learns; the variable schedule ends sending what the uncompressed run does.
TEST_F(FullBatchGrids, CompressionAtRateOneIsTheIdentityAndTheScheduleReachesIt) {
  if (world_.size() == 1) GTEST_SKIP() << "nothing crosses ranks";
  const bulkgnn::testing::scratch_dir dir;
  const auto ds = bulkgnn::testing::small_csbm(dir, 400);
  const auto data = trainer::whole_dataset(ds);
  for (const auto grid : {grid_kind::one_d, grid_kind::sar}) {
    const auto what = grid_kind_name(grid);
    const auto run = [&](const std::string& compression) {
      auto options = small_run(trainer::layer_kind::gcn, grid, 1);
      options.epochs = 4;
      options.compression = compression_schedule(compression);
      comm::traffic_log log;
      comm::mpi_communicator world(MPI_COMM_WORLD, "world", log);
      return train_full_batch(data, options, world);
    };
    const auto none = run("none");
    const auto rate_one = run("fixed:1");
    EXPECT_EQ(rate_one.parameters, none.parameters) << what;
    const auto fixed = run("fixed:8");
    const auto moved = [](const full_batch_epoch& e) {
      return e.traffic.at("forward") + e.traffic.at("backward");
    };
    // 16-float rows at 4 bits: 16 bytes for 64, plus the 8-byte lengths.
    EXPECT_LT(moved(fixed.epochs[0]), moved(none.epochs[0]) / 3) << what;
    EXPECT_NE(fixed.parameters, none.parameters) << what;
    expect_near_all(fixed.parameters, none.parameters, 0.05f, what + " fixed:8 weights");
    const auto variable = run("variable:4:2");
    EXPECT_EQ(variable.epochs[0].compression_rate, 4);
    EXPECT_EQ(variable.epochs[3].compression_rate, 1);
    EXPECT_LT(moved(variable.epochs[0]), moved(none.epochs[0]));
    EXPECT_EQ(moved(variable.epochs[3]), moved(none.epochs[3])) << what;
  }
}

}  // namespace
}  // namespace bulkgnn::fullbatch
