#include "bulkgnn/distributed/partitioned_features.hpp"

#include "bulkgnn/comm/mpi_communicator.hpp"
#include "bulkgnn/loader/feature_normalization.hpp"

#include "../sampler/test_graphs.hpp"

#include <gtest/gtest.h>
#include "mpi_world.hpp"

#include <string>
#include <vector>

namespace bulkgnn::distributed {
namespace {

constexpr std::int64_t vertices = 300;
constexpr std::int64_t columns = 5;
constexpr std::int64_t row_bytes = 4 * columns;

using testing::world_size;

std::vector<float> feature_table() {
  std::vector<float> table(vertices * columns);
  for (std::size_t i = 0; i < table.size(); ++i) table[i] = 0.25F * static_cast<float>(i) - 7;
  return table;
}

// Requests of one rank in one epoch: skewed towards low ids (so some rows are
// hot), with repeats, different on every rank; the same in every epoch.
std::vector<std::vector<vertex_t>> epoch_requests(int rank) {
  std::vector<std::vector<vertex_t>> fetches;
  for (int f = 0; f < 4; ++f) {
    std::vector<vertex_t> ids;
    for (int i = 0; i < 40; ++i) {
      const auto x = static_cast<std::int64_t>(i * 53 + f * 17 + rank * 29) % vertices;
      ids.push_back(static_cast<vertex_t>(x * x / vertices));
    }
    fetches.push_back(std::move(ids));
  }
  return fetches;
}

struct epoch_outcome {
  feature_cache_counts counts;
  std::int64_t bytes_sent = 0;  // features stage, this rank
};

// Three epochs of fetches; every fetched row must be the table's.
std::vector<epoch_outcome> run_epochs(int replication, const feature_cache_options& cache) {
  comm::traffic_log log;
  comm::mpi_communicator features_comm(MPI_COMM_WORLD, "features", log);
  const auto table = feature_table();
  const dense_view<const float> features{vertices, columns, table};
  const auto graph = testing::random_graph(static_cast<vertex_t>(vertices), 6);
  const auto partition = block_partition(vertices, features_comm.size() / replication);
  partitioned_features fetcher(features_comm, features, partition, replication, cache,
                               graph.view());
  std::vector<epoch_outcome> outcomes;
  for (int epoch = 0; epoch < 3; ++epoch) {
    const auto before = log.all()["features"].bytes_sent;
    for (const auto& ids : epoch_requests(features_comm.rank())) {
      std::vector<float> out(ids.size() * columns, -1.0F);
      fetcher.fetch(ids, {static_cast<std::int64_t>(ids.size()), columns, std::span<float>(out)});
      for (std::size_t i = 0; i < ids.size(); ++i)
        for (std::int64_t c = 0; c < columns; ++c)
          EXPECT_EQ(out[i * columns + c], table[ids[i] * columns + c])
              << "vertex " << ids[i] << " column " << c;
    }
    outcomes.push_back({fetcher.take_cache_counts(), log.all()["features"].bytes_sent - before});
    fetcher.end_epoch();
  }
  return outcomes;
}

std::int64_t summed(std::int64_t value) {
  comm::traffic_log log;
  comm::mpi_communicator world(MPI_COMM_WORLD, "sum", log);
  return world.all_reduce(value, comm::reduce_op::sum);
}

std::vector<int> replications() {
  std::vector<int> out;
  for (int c = 1; c <= world_size(); ++c)
    if (world_size() % c == 0) out.push_back(c);
  return out;
}

TEST(PartitionedFeatures, EveryCacheServesExactlyTheOwnersRows) {
  for (const int replication : replications())
    for (const auto choice :
         {cache_choice::by_degree, cache_choice::by_access, cache_choice::by_access_each_epoch})
      for (const std::int64_t rows : {0, 7, 60, 300}) {
        SCOPED_TRACE("c=" + std::to_string(replication) + " " + cache_choice_name(choice) + " " +
                     std::to_string(rows) + " rows");
        const auto outcomes =
            run_epochs(replication, {.bytes = rows * row_bytes, .choice = choice});
        std::int64_t requested = 0;
        for (const auto& ids : epoch_requests(0))
          requested += static_cast<std::int64_t>(ids.size());
        for (const auto& o : outcomes) {
          EXPECT_EQ(o.counts.local + o.counts.hits + o.counts.misses, requested);
          EXPECT_EQ(o.counts.bytes_saved, o.counts.hits * (4 + row_bytes));
          EXPECT_LE(o.counts.cached_rows, rows);
        }
      }
}

// What a cache saves is exactly what the hits would have sent: the same
// fetches with and without it differ by 4 + 4·f bytes per hit, over all ranks.
TEST(PartitionedFeatures, CacheHitsRemoveTheirBytesFromTheFetches) {
  for (const auto choice : {cache_choice::by_degree, cache_choice::by_access_each_epoch}) {
    SCOPED_TRACE(cache_choice_name(choice));
    const auto without = run_epochs(1, {});
    const auto with = run_epochs(1, {.bytes = 30 * row_bytes, .choice = choice});
    for (std::size_t e = 0; e < with.size(); ++e) {
      // A cache chosen by access is empty in the first epoch.
      if (choice != cache_choice::by_degree && e == 0) continue;
      const auto saved = summed(with[e].counts.bytes_saved);
      const auto sent_without = summed(without[e].bytes_sent);
      const auto sent_with = summed(with[e].bytes_sent);
      if (world_size() == 1) {
        EXPECT_EQ(saved, 0);  // nothing is remote
        continue;
      }
      EXPECT_GT(saved, 0);
      EXPECT_EQ(sent_without - sent_with, saved);
    }
  }
}

// Chosen by access, a cache that holds every remote row fetched in the first
// epoch serves every remote row of the next epochs (the same fetches).
TEST(PartitionedFeatures, CacheByAccessServesTheFirstEpochsRemoteRowsAfterIt) {
  const auto outcomes =
      run_epochs(1, {.bytes = vertices * row_bytes, .choice = cache_choice::by_access});
  EXPECT_EQ(outcomes[0].counts.hits, 0);
  for (std::size_t e = 1; e < outcomes.size(); ++e) {
    EXPECT_EQ(outcomes[e].counts.misses, 0);
    EXPECT_EQ(outcomes[e].counts.hits, outcomes[0].counts.misses);
  }
}

// Rows moved through a wire (make_host_communicator on the CPU; NCCL on
// GPUs) are the rows fetch() returns, normalised as placed, with the same
// cache counts and the same bytes but each part's 4-byte count.
TEST(PartitionedFeatures, RowsMovedThroughAWireAreTheFetchedRowsNormalised) {
  const auto table = feature_table();
  const dense_view<const float> features{vertices, columns, table};
  const loader::row_normalizer normalizer(features);
  const auto graph = testing::random_graph(static_cast<vertex_t>(vertices), 6);
  for (const int replication : replications())
    for (const std::int64_t rows : {0, 40}) {
      SCOPED_TRACE("c=" + std::to_string(replication) + " " + std::to_string(rows) + " rows");
      comm::traffic_log fetched_log;
      comm::traffic_log placed_log;
      comm::mpi_communicator fetched_comm(MPI_COMM_WORLD, "features", fetched_log);
      comm::mpi_communicator placed_comm(MPI_COMM_WORLD, "features", placed_log);
      const auto partition = block_partition(vertices, world_size() / replication);
      const feature_cache_options cache{.bytes = rows * row_bytes,
                                        .choice = cache_choice::by_access_each_epoch};
      partitioned_features fetched(fetched_comm, features, partition, replication, cache,
                                   graph.view());
      partitioned_features placed(placed_comm, features, partition, replication, cache,
                                  graph.view());
      const executor host(backend::cpu);
      EXPECT_EQ(placed.placed_memory(), nullptr);
      placed.place_rows(host, &normalizer, [](comm::communicator& group) {
        return comm::make_host_communicator(group);
      });
      ASSERT_EQ(placed.placed_memory(), &host.memory());
      const int members = world_size() / replication;
      for (int epoch = 0; epoch < 3; ++epoch) {
        std::int64_t fetches = 0;
        const auto fetched_before = fetched_log.all()["features"].bytes_sent;
        const auto placed_before = placed_log.all()["features"].bytes_sent;
        for (const auto& ids : epoch_requests(fetched_comm.rank())) {
          const auto n = static_cast<std::int64_t>(ids.size());
          std::vector<float> expected(ids.size() * columns);
          std::vector<float> got(ids.size() * columns, -1.0F);
          fetched.fetch(ids, {n, columns, std::span<float>(expected)});
          normalizer.apply(ids, {n, columns, std::span<float>(expected)});
          placed.fetch_placed(ids, {n, columns, std::span<float>(got)});
          EXPECT_EQ(got, expected);
          ++fetches;
        }
        const auto a = fetched.take_cache_counts();
        const auto b = placed.take_cache_counts();
        EXPECT_EQ(a.hits, b.hits);
        EXPECT_EQ(a.misses, b.misses);
        EXPECT_EQ(a.local, b.local);
        EXPECT_EQ(fetched_log.all()["features"].bytes_sent - fetched_before -
                      (placed_log.all()["features"].bytes_sent - placed_before),
                  fetches * 4 * (members - 1));
        fetched.end_epoch();
        placed.end_epoch();
      }
    }
}

TEST(PartitionedFeatures, FetchPlacedBeforePlacingIsRefused) {
  comm::traffic_log log;
  comm::mpi_communicator features_comm(MPI_COMM_WORLD, "features", log);
  const auto table = feature_table();
  const auto partition = block_partition(vertices, features_comm.size());
  partitioned_features fetcher(features_comm, {vertices, columns, table}, partition, 1);
  std::vector<float> out(columns);
  const std::vector<vertex_t> ids{0};
  EXPECT_THROW(fetcher.fetch_placed(ids, {1, columns, std::span<float>(out)}), error);
  EXPECT_FALSE(fetcher.place_on_device(executor(backend::cpu), nullptr))
      << "a host executor has no GPU to place rows on";
}

}  // namespace
}  // namespace bulkgnn::distributed
