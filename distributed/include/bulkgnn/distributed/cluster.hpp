#pragma once

#include "bulkgnn/comm/mpi_communicator.hpp"
#include "bulkgnn/data/dataset.hpp"
#include "bulkgnn/data/partitioned_dataset.hpp"
#include "bulkgnn/distributed/partition.hpp"
#include "bulkgnn/distributed/partitioned_features.hpp"
#include "bulkgnn/distributed/sharded_rows.hpp"

#include <nlohmann/json.hpp>

#include <memory>
#include <optional>
#include <string>

namespace bulkgnn::distributed {

struct cluster_options {
  grid_kind grid = grid_kind::replicated;
  int replication = 1;          // 1.5D: copies of each block row; 3D: layers
  int feature_replication = 1;  // copies of each feature row
  std::string partition = "block";
  int partition_seed = 0;
  draw_location draw_at = draw_location::owner;  // 1.5d, 2d and 3d node-wise draws
  feature_cache_options feature_cache;           // hot remote feature rows kept per rank
};

// option_error naming the option if `options` cannot lay a run out over
// `ranks` ranks. A function of its arguments only, so ranks that agree on
// them all reach the same verdict.
void validate(const cluster_options& options, int ranks);

// One rank's share of a distributed run over MPI_COMM_WORLD: a communicator
// per pipeline stage (sampling, features, gradients; each counted apart),
// the graph laid out on the chosen grid, and (if asked) the features
// partitioned by vertex owner. Collective to construct.
class cluster {
 public:
  cluster(const data::dataset& ds, const cluster_options& options, bool partition_features);
  // From this rank's part of a partitioned dataset (its part_of_rank), which
  // the cluster reads in place: the rank holds no other rows of A, and, with
  // `partition_features`, no other feature rows than those of its feature
  // group position (the dataset's parts must then be P / feature_replication).
  // The partition is the dataset's.
  cluster(const data::dataset_shard& shard, const cluster_options& options,
          bool partition_features);

  [[nodiscard]] int rank() const { return world_.rank(); }
  [[nodiscard]] int ranks() const { return world_.size(); }
  [[nodiscard]] sampler::row_source& rows() { return *rows_; }
  [[nodiscard]] partitioned_features* features() { return features_.get(); }
  [[nodiscard]] comm::communicator& world() { return world_; }
  [[nodiscard]] comm::communicator& gradients() { return gradients_; }
  // The sample stage's context: row fetches and layer-wise split sampling.
  [[nodiscard]] comm::communicator& sampling() { return sampling_; }
  [[nodiscard]] comm::traffic_log& log() { return log_; }
  [[nodiscard]] const cluster_options& options() const { return options_; }
  [[nodiscard]] const rank_grid& grid() const { return grid_; }
  // The grid partition's edge cut and the feature partition's, if any.
  [[nodiscard]] nlohmann::json layout() const { return layout_; }

  // Every rank's traffic per stage, by rank (collective).
  [[nodiscard]] nlohmann::json traffic_by_rank();

  // The feature cache's counts since the previous call, summed over the
  // ranks ({hits, misses, local, hit_rate, bytes_saved, cached_rows}), then,
  // if `refill`, the cache refilled as its choice says (collective); null
  // without a feature cache.
  [[nodiscard]] nlohmann::json end_epoch(bool refill);

 private:
  // The communicators, for options valid over MPI_COMM_WORLD's ranks.
  explicit cluster(const cluster_options& options);

  cluster_options options_;
  comm::traffic_log log_;
  comm::mpi_communicator world_;
  rank_grid grid_;
  comm::mpi_communicator sampling_;
  comm::mpi_communicator features_comm_;
  comm::mpi_communicator gradients_;
  vertex_partition grid_partition_;
  std::optional<vertex_partition> feature_partition_;
  std::unique_ptr<sampler::row_source> rows_;
  data::mapped_feature_rows feature_rows_;  // read by features_ (partitioned datasets)
  std::unique_ptr<partitioned_features> features_;
  nlohmann::json layout_;
};

}  // namespace bulkgnn::distributed
