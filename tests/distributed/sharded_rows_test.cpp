#include "bulkgnn/distributed/sharded_rows.hpp"

#include "../sampler/test_graphs.hpp"
#include "bulkgnn/core/error.hpp"
#include "bulkgnn/sampler/bulk_sampler.hpp"

#include <gtest/gtest.h>

#include <cmath>
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
  for (const auto& g : {grid_case{grid_kind::two_d, 1}, grid_case{grid_kind::three_d, 1},
                        grid_case{grid_kind::three_d, 2}}) {
    try {
      validate_grid(g.kind, ranks, g.replication);
      grids.push_back(g);
    } catch (const option_error&) {
    }
  }
  return grids;
}

// 1.5d: a block row per team member; 2d: a block row per process row (q of
// them); 3d: a block row per process row of each layer (c·q).
int parts_for(grid_case g, int ranks) {
  const int layer_side =
      static_cast<int>(std::lround(std::sqrt(static_cast<double>(ranks / g.replication))));
  switch (g.kind) {
    case grid_kind::one_and_half_d:
      return ranks / g.replication;
    case grid_kind::two_d:
      return layer_side;
    case grid_kind::three_d:
      return g.replication * layer_side;
    case grid_kind::replicated:
      break;
  }
  return ranks;
}

TEST(ShardedRows, EveryGridFetchesExactlyTheRowsOfTheWholeGraph) {
  traffic_log log;
  communicator sampling(MPI_COMM_WORLD, "sampling", log);
  const auto g = testing::random_graph(500, 9);
  for (const auto grid : grids_for(sampling.size())) {
    std::unique_ptr<sampler::row_source> source;
    const auto partition = block_partition(g.rows, parts_for(grid, sampling.size()));
    try {
      source = make_row_source(grid.kind, sampling, g.view(), partition, grid.replication);
    } catch (const option_error& e) {
      // A grid this build lacks (2d/3d without CombBLAS) is skipped on every rank alike.
      continue;
    }
    SCOPED_TRACE(grid_kind_name(grid.kind) + " c=" + std::to_string(grid.replication));
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
      }
    }
  }
}

TEST(ShardedRows, SamplersDrawTheSameMinibatchesOnEveryGrid) {
  traffic_log log;
  communicator sampling(MPI_COMM_WORLD, "sampling", log);
  const auto g = testing::random_graph(700, 4);
  std::vector<vertex_t> train(700);
  std::iota(train.begin(), train.end(), 0);
  const sampler::epoch_plan plan(train, 20, 5, 1);
  for (const auto kind : {sampler::sampler_kind::node_wise, sampler::sampler_kind::ladies}) {
    const sampler::sampler_options options{.kind = kind,
                                           .fanouts = kind == sampler::sampler_kind::node_wise
                                                          ? std::vector<std::int64_t>{6, 4}
                                                          : std::vector<std::int64_t>{30, 30},
                                           .seed = 3};
    sampler::bulk_sampler whole(g.view(), options);
    for (const auto grid : grids_for(sampling.size())) {
      std::unique_ptr<sampler::row_source> source;
      const auto partition = block_partition(g.rows, parts_for(grid, sampling.size()));
      try {
        source = make_row_source(grid.kind, sampling, g.view(), partition, grid.replication);
      } catch (const option_error&) {
        continue;
      }
      SCOPED_TRACE(grid_kind_name(grid.kind) + " " + sampler::sampler_kind_name(kind));
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

}  // namespace
}  // namespace bulkgnn::distributed
