#include "bulkgnn/distributed/sharded_rows.hpp"

#include "bulkgnn/distributed/cluster.hpp"

#include "../sampler/test_graphs.hpp"
#include "bulkgnn/core/error.hpp"
#include "bulkgnn/sampler/bulk_sampler.hpp"
#include "bulkgnn/sampler/part_digests.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <numeric>

namespace bulkgnn::distributed {
namespace {

struct grid_case {
  grid_kind kind;
  int replication;
};

// Every grid this rank count can form.
std::vector<grid_case> grids_for(int ranks) {
  std::vector<grid_case> grids{{grid_kind::replicated, 1}};
  for (int c = 1; c <= ranks; ++c)
    if (ranks % c == 0) grids.push_back({grid_kind::one_and_half_d, c});
  for (const auto& g : {grid_case{grid_kind::two_d, 1}, grid_case{grid_kind::two_d_summa, 1},
                        grid_case{grid_kind::three_d, 1}, grid_case{grid_kind::three_d, 2}}) {
    try {
      (void)minibatch_grid(g.kind, ranks, g.replication);
      grids.push_back(g);
    } catch (const option_error&) {
    }
  }
  return grids;
}

int sampling_ranks() {
  int ranks = 1;
  MPI_Comm_size(MPI_COMM_WORLD, &ranks);
  return ranks;
}

// 1.5d: a block row per team member; 2d: a block row per process row (q of
// them); 3d: a block row per process row of each layer (c·q).

int parts_for(grid_case g, int ranks) {
  return grid_partition_parts(minibatch_grid(g.kind, ranks, g.replication));
}

// The test graph with a weight per entry and every row stored backwards, so
// that fetched rows must keep A's stored order rather than sort it.
csr_matrix weighted_backwards(csr_matrix g) {
  for (std::int64_t v = 0; v < g.rows; ++v)
    std::reverse(g.indices.begin() + g.indptr[v], g.indices.begin() + g.indptr[v + 1]);
  g.values.resize(g.indices.size());
  for (std::size_t e = 0; e < g.values.size(); ++e) g.values[e] = 0.5F * static_cast<float>(e + 1);
  return g;
}

// Parts of uneven sizes whose vertices are scattered, so that new ids differ
// from old ids and 2D blocks need padding.
vertex_partition scattered_partition(std::int64_t num_vertices, int parts) {
  std::vector<std::int32_t> owner(static_cast<std::size_t>(num_vertices));
  for (std::int64_t v = 0; v < num_vertices; ++v)
    owner[v] = static_cast<std::int32_t>((v * v + v / 7) % parts);
  return partition_from_owners(std::move(owner), parts);
}

// The row source of `grid`, or null for a grid this build lacks (2d without
// CombBLAS), which every rank then skips alike.
std::unique_ptr<sampler::row_source> row_source_or_null(
    const grid_case& grid, comm::communicator& sampling, csr_view graph,
    const vertex_partition& partition, draw_location draw_at = draw_location::owner) {
  try {
    return make_row_source(minibatch_grid(grid.kind, sampling.size(), grid.replication), sampling,
                           graph, partition, draw_at);
  } catch (const option_error&) {
    return nullptr;
  }
}

TEST(ShardedRows, EveryGridFetchesExactlyTheRowsOfTheWholeGraph) {
  comm::traffic_log log;
  comm::mpi_communicator sampling(MPI_COMM_WORLD, "sampling", log);
  const auto sorted = testing::random_graph(500, 9);
  for (const auto& g : {sorted, weighted_backwards(sorted)})
    for (const bool scattered : {false, true})
      for (const auto grid : grids_for(sampling.size())) {
        const int parts = parts_for(grid, sampling.size());
        const auto partition =
            scattered ? scattered_partition(g.rows, parts) : block_partition(g.rows, parts);
        const auto source = row_source_or_null(grid, sampling, g.view(), partition);
        if (!source) continue;
        SCOPED_TRACE(grid_kind_name(grid.kind) + " c=" + std::to_string(grid.replication) +
                     (g.values.empty() ? " sorted" : " weighted backwards") +
                     (scattered ? " scattered" : " block"));
        // Different requests per rank, with repeats; the last call asks nothing.
        for (int call = 0; call < 3; ++call) {
          std::vector<vertex_t> wanted;
          if (call < 2)
            for (int i = 0; i < 50; ++i)
              wanted.push_back(static_cast<vertex_t>((i * 37 + sampling.rank() * 11 + call) % 500));
          const auto rows = source->rows(wanted);
          ASSERT_EQ(rows.row_of.size(), wanted.size());
          for (std::size_t i = 0; i < wanted.size(); ++i) {
            const auto got = rows.rows.row(rows.row_of[i]);
            const auto expected = g.view().row(wanted[i]);
            ASSERT_TRUE(std::equal(got.begin(), got.end(), expected.begin(), expected.end()))
                << "row " << wanted[i];
            if (g.values.empty()) continue;
            const auto got_weights = rows.rows.row_values(rows.row_of[i]);
            const auto weights = g.view().row_values(wanted[i]);
            ASSERT_TRUE(
                std::equal(got_weights.begin(), got_weights.end(), weights.begin(), weights.end()))
                << "weights of row " << wanted[i];
          }
        }
      }
}

// Every byte one rank counts as sent another counts as received, including
// the SUMMA traffic that the 2D grid counts from block sizes.
TEST(ShardedRows, TrafficSentEqualsTrafficReceivedOverAllRanks) {
  const auto g = testing::random_graph(500, 9);
  for (const auto grid : grids_for(sampling_ranks())) {
    comm::traffic_log log;
    comm::mpi_communicator sampling(MPI_COMM_WORLD, "sampling", log);
    const auto partition = block_partition(g.rows, parts_for(grid, sampling.size()));
    const auto source = row_source_or_null(grid, sampling, g.view(), partition);
    if (!source) continue;
    SCOPED_TRACE(grid_kind_name(grid.kind) + " c=" + std::to_string(grid.replication));
    std::vector<vertex_t> wanted;
    for (int i = 0; i < 40; ++i)
      wanted.push_back(static_cast<vertex_t>((i * 53 + sampling.rank() * 29) % 500));
    std::ignore = source->rows(wanted);
    const auto counted = log.all()["sampling"];
    comm::mpi_communicator totals(MPI_COMM_WORLD, "totals", log);
    std::vector<std::int64_t> sent_and_received{counted.bytes_sent, counted.bytes_received};
    totals.all_reduce(std::span<std::int64_t>(sent_and_received));
    EXPECT_EQ(sent_and_received[0], sent_and_received[1]);
    // 2d and 3d always communicate on more than one rank (1.5d with c = P does not).
    if (sampling.size() > 1 && grid.kind != grid_kind::replicated &&
        grid.kind != grid_kind::one_and_half_d) {
      EXPECT_GT(sent_and_received[0], 0);
    }
  }
}

TEST(ShardedRows, SamplersDrawTheSameMinibatchesOnEveryGrid) {
  comm::traffic_log log;
  comm::mpi_communicator sampling(MPI_COMM_WORLD, "sampling", log);
  const auto g = testing::random_graph(700, 4);
  std::vector<vertex_t> train(700);
  std::iota(train.begin(), train.end(), 0);
  const sampler::epoch_plan plan(train, 20, 5, 1);
  // PinSAGE's walks end at random: each rank's fetches must still match.
  for (const std::string kind : {"sage", "ladies", "fastgcn", "pinsage"}) {
    const bool per_destination = kind == "sage" || kind == "pinsage";
    const sampler::sampler_options options{
        .kind = kind,
        .fanouts =
            per_destination ? std::vector<std::int64_t>{6, 4} : std::vector<std::int64_t>{30, 30},
        .seed = 3,
        .parameters =
            kind == "pinsage"
                ? std::map<std::string, std::int64_t, std::less<>>{{"walks", 1}, {"traversals", 2}}
                : std::map<std::string, std::int64_t, std::less<>>{}};
    sampler::bulk_sampler whole(g.view(), options);
    for (const auto grid : grids_for(sampling.size()))
      for (const auto draw_at : {draw_location::owner, draw_location::requester}) {
        const auto partition = block_partition(g.rows, parts_for(grid, sampling.size()));
        const auto source = row_source_or_null(grid, sampling, g.view(), partition, draw_at);
        if (!source) continue;
        SCOPED_TRACE(grid_kind_name(grid.kind) + " " + kind + " drawn at the " +
                     draw_location_name(draw_at));
        sampler::bulk_sampler sharded(*source, options);
        // Rank r samples minibatches r, r + P, ... of each bulk of 2P.
        const std::int64_t bulk = 2 * sampling.size();
        for (std::int64_t first = 0; first + bulk <= plan.num_minibatches(); first += bulk) {
          segmented_vertices seeds;
          std::vector<std::int64_t> ids;
          for (std::int64_t j = sampling.rank(); j < bulk; j += sampling.size()) {
            seeds.push_segment(plan.seeds(first + j));
            ids.push_back(first + j);
          }
          const auto mine = sharded.sample(plan.epoch(), seeds, ids);
          for (std::size_t k = 0; k < ids.size(); ++k)
            EXPECT_EQ(mine.digest(static_cast<std::int64_t>(k)),
                      whole.sample(plan, ids[k], 1).digest(0))
                << "minibatch " << ids[k];
        }
      }
  }
}

TEST(ShardedRows, EveryGridCutsRowsToAColumnRangeAsTheWholeGraphDoes) {
  comm::traffic_log log;
  comm::mpi_communicator sampling(MPI_COMM_WORLD, "sampling", log);
  const auto g = weighted_backwards(testing::random_graph(500, 9));
  // Each rank its own range (the last one empty on one rank) and rows, with repeats.
  const auto first = static_cast<vertex_t>(500 * sampling.rank() / sampling.size());
  const auto last = sampling.rank() == 0 && sampling.size() > 1
                        ? first
                        : static_cast<vertex_t>(500 * (sampling.rank() + 1) / sampling.size());
  std::vector<vertex_t> wanted;
  for (int i = 0; i < 60; ++i)
    wanted.push_back(static_cast<vertex_t>((i * 37 + sampling.rank() * 11) % 500));
  wanted.push_back(wanted.front());
  const auto expected = sampler::slice_columns(g.view(), wanted, first, last);
  for (const auto grid : grids_for(sampling.size()))
    for (const auto draw_at : {draw_location::owner, draw_location::requester}) {
      const auto partition = scattered_partition(g.rows, parts_for(grid, sampling.size()));
      const auto source = row_source_or_null(grid, sampling, g.view(), partition, draw_at);
      if (!source) continue;
      SCOPED_TRACE(grid_kind_name(grid.kind) + " c=" + std::to_string(grid.replication) +
                   " cut at the " + draw_location_name(draw_at));
      const auto cut = source->rows_in_columns(wanted, first, last);
      ASSERT_EQ(cut.rows.rows, expected.rows.rows);
      EXPECT_EQ(std::vector<edge_t>(cut.rows.indptr.begin(), cut.rows.indptr.end()),
                std::vector<edge_t>(expected.rows.indptr.begin(), expected.rows.indptr.end()));
      EXPECT_EQ(std::vector<vertex_t>(cut.rows.indices.begin(), cut.rows.indices.end()),
                std::vector<vertex_t>(expected.rows.indices.begin(), expected.rows.indices.end()));
      EXPECT_EQ(cut.degrees, expected.degrees);
    }
}

// Layer-wise hops split over the ranks (sample_slices) on a sharded graph:
// the merged parts are the whole minibatches on every grid, and LADIES on
// 1.5d moves fewer bytes when the owners cut the frontier's rows to each
// rank's columns than when every rank fetches them whole.
TEST(ShardedRows, SplitLayerWiseSamplingDrawsTheWholeMinibatchesOnEveryGrid) {
  comm::traffic_log log;
  comm::mpi_communicator sampling(MPI_COMM_WORLD, "sampling", log);
  comm::traffic_log uncounted;
  comm::mpi_communicator merging(MPI_COMM_WORLD, "merging", uncounted);
  // Sparse enough that a block row keeps few of a frontier row's entries,
  // as on real graphs (on a graph barely larger than a minibatch's sources,
  // gathering the block entries would cost what cutting the rows saves).
  const auto g = testing::random_graph(3000, 24);
  std::vector<vertex_t> train(3000);
  std::iota(train.begin(), train.end(), 0);
  const sampler::epoch_plan plan(train, 40, 2, 1);
  const sampler::minibatch_split split{
      .slice = sampling.rank(), .slices = sampling.size(), .ranks = &sampling};
  for (const std::string kind : {"ladies", "fastgcn"}) {
    const sampler::sampler_options options{.kind = kind, .fanouts = {40, 40}, .seed = 5};
    sampler::bulk_sampler whole(g.view(), options);
    std::map<draw_location, std::int64_t> ladies_bytes_on_one_and_half_d;
    for (const auto grid : grids_for(sampling.size()))
      for (const auto draw_at : {draw_location::owner, draw_location::requester}) {
        const auto partition = scattered_partition(g.rows, parts_for(grid, sampling.size()));
        const auto source = row_source_or_null(grid, sampling, g.view(), partition, draw_at);
        if (!source) continue;
        SCOPED_TRACE(grid_kind_name(grid.kind) + " c=" + std::to_string(grid.replication) + " " +
                     kind + " at the " + draw_location_name(draw_at));
        sampler::bulk_sampler sharded(*source, options);
        const auto sent_before = log.all()["sampling"].bytes_sent;
        for (std::int64_t first = 0; first < 12; first += 4) {
          const std::int64_t count = 4;
          const auto parts = sharded.sample_slices(plan, first, count, split);
          const auto expected = whole.sample(plan, first, count);
          std::vector<sampler::destination_edges> mine;
          for (std::int64_t j = 0; j < count; ++j) {
            const auto d = parts.destinations(j);
            mine.insert(mine.end(), d.begin(), d.end());
          }
          for (const auto& [id, digest] : sampler::merge_part_digests(merging, plan, 2, mine))
            EXPECT_EQ(digest, expected.digest(id - first)) << "minibatch " << id;
        }
        if (kind == "ladies" && grid.kind == grid_kind::one_and_half_d && grid.replication == 1)
          ladies_bytes_on_one_and_half_d[draw_at] = merging.all_reduce(
              log.all()["sampling"].bytes_sent - sent_before, comm::reduce_op::sum);
      }
    if (sampling.size() > 1 && kind == "ladies") {
      EXPECT_LT(ladies_bytes_on_one_and_half_d.at(draw_location::owner),
                ladies_bytes_on_one_and_half_d.at(draw_location::requester));
    }
  }
}

// Frontier rows of this rank (repeats across minibatches, and within one),
// with the minibatch of each.
struct frontier_rows {
  std::vector<vertex_t> vertices;
  std::vector<std::uint32_t> minibatches;
};

frontier_rows some_frontier(int rank, int call, std::int64_t num_vertices) {
  frontier_rows f;
  if (call == 2) return f;  // the last call asks nothing
  for (int i = 0; i < 60; ++i) {
    f.vertices.push_back(static_cast<vertex_t>((i * 41 + rank * 13 + call) % num_vertices));
    f.minibatches.push_back(static_cast<std::uint32_t>(100 * rank + i / 20));
  }
  return f;
}

// Every draw kind that a node-wise sampler makes, on a fanout below and
// above the test graph's degrees.
std::vector<kernels::row_sampling_options> node_wise_draws(bool weighted) {
  std::vector<kernels::row_sampling_options> draws;
  for (const std::int64_t fanout : {3, 40})
    for (const auto mode : {kernels::replacement::without, kernels::replacement::with}) {
      draws.push_back({.fanout = fanout, .mode = mode, .weights = kernels::weighting::uniform});
      if (weighted)
        draws.push_back({.fanout = fanout, .mode = mode, .weights = kernels::weighting::by_value});
    }
  return draws;
}

void expect_same_rows(const csr_matrix& got, const csr_matrix& expected) {
  ASSERT_EQ(got.rows, expected.rows);
  EXPECT_EQ(got.cols, expected.cols);
  EXPECT_EQ(got.indptr, expected.indptr);
  EXPECT_EQ(got.indices, expected.indices);
  EXPECT_EQ(got.values, expected.values);
}

TEST(ShardedRows, DrawsAtTheOwnerEqualDrawsFromTheWholeGraph) {
  comm::traffic_log log;
  comm::mpi_communicator sampling(MPI_COMM_WORLD, "sampling", log);
  const auto sorted = testing::random_graph(400, 12);
  for (const auto& g : {sorted, weighted_backwards(sorted)})
    for (const auto grid : grids_for(sampling.size()))
      for (const auto draw_at : {draw_location::owner, draw_location::requester}) {
        const auto partition = scattered_partition(g.rows, parts_for(grid, sampling.size()));
        const auto source = row_source_or_null(grid, sampling, g.view(), partition, draw_at);
        if (!source) continue;
        SCOPED_TRACE(grid_kind_name(grid.kind) + " c=" + std::to_string(grid.replication) +
                     (g.values.empty() ? " sorted" : " weighted backwards") + " drawn at the " +
                     draw_location_name(draw_at));
        for (const auto& draw : node_wise_draws(!g.values.empty()))
          for (int call = 0; call < 3; ++call) {
            const auto f = some_frontier(sampling.rank(), call, g.rows);
            const kernels::row_streams streams{.seed = 5,
                                               .epoch = 2,
                                               .layer = static_cast<std::uint32_t>(call),
                                               .minibatch_of_row = f.minibatches,
                                               .key_rows = f.vertices};
            const auto drawn = source->draw_rows({}, f.vertices, streams, draw);
            expect_same_rows(drawn, kernels::sample_rows({}, g.view(), f.vertices, streams, draw));
          }
      }
}

// 1.5d draws at the owner send, summed over ranks: a 4-byte count per pair
// of distinct team members in each all-to-all (requests, rows, and weights
// when A is weighted); 8 bytes (vertex, minibatch) per request to another
// member; 4 (length) + 4 per drawn entry (+ 4 per weight) per row back.
TEST(ShardedRows, DrawsAtTheOwnerSendTheBytesOfTheClosedForm) {
  const auto sorted = testing::random_graph(400, 12);
  const int ranks = sampling_ranks();
  for (const auto& g : {sorted, weighted_backwards(sorted)})
    for (int c = 1; c <= ranks; ++c) {
      if (ranks % c != 0) continue;
      comm::traffic_log log;
      comm::mpi_communicator sampling(MPI_COMM_WORLD, "sampling", log);
      const grid_case grid{grid_kind::one_and_half_d, c};
      const auto partition = scattered_partition(g.rows, parts_for(grid, ranks));
      const auto source = row_source_or_null(grid, sampling, g.view(), partition);
      const auto f = some_frontier(sampling.rank(), 0, g.rows);
      const kernels::row_streams streams{.seed = 1,
                                         .epoch = 0,
                                         .layer = 0,
                                         .minibatch_of_row = f.minibatches,
                                         .key_rows = f.vertices};
      const bool weighted = !g.values.empty();
      const auto drawn = source->draw_rows({}, f.vertices, streams,
                                           {.fanout = 3, .mode = kernels::replacement::without});
      const int team = ranks / c;
      const int my_part = sampling.rank() % team;
      std::int64_t expected = (weighted ? 3 : 2) * 4 * (team - 1);
      for (std::size_t i = 0; i < f.vertices.size(); ++i) {
        if (partition.owner[f.vertices[i]] == my_part) continue;
        const auto length = drawn.indptr[i + 1] - drawn.indptr[i];
        expected += 8 + 4 + 4 * length + (weighted ? 4 * length : 0);
      }
      std::vector<std::int64_t> totals{expected, log.all()["sampling"].bytes_sent};
      comm::mpi_communicator reduce(MPI_COMM_WORLD, "totals", log);
      reduce.all_reduce(std::span<std::int64_t>(totals));
      SCOPED_TRACE("c=" + std::to_string(c) + (weighted ? " weighted" : ""));
      EXPECT_EQ(totals[1], totals[0]);
    }
}

}  // namespace
}  // namespace bulkgnn::distributed
