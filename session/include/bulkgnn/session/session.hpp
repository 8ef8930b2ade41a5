#pragma once

#include "bulkgnn/comm/communicator.hpp"
#include "bulkgnn/core/executor.hpp"
#include "bulkgnn/data/dataset.hpp"
#include "bulkgnn/data/partitioned_dataset.hpp"
#include "bulkgnn/sampler/bulk_sampler.hpp"
#include "bulkgnn/sampler/minibatch.hpp"
#include "bulkgnn/sampler/row_source.hpp"
#include "bulkgnn/trainer/data_parallel.hpp"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

// The state of one run over this process's ranks, for every front end (the
// CLI, a Python module): which rank this is, the layout of the graph and
// features over the ranks, and what the sampler, loader and trainer need of
// it. Front ends speak their own vocabulary (flags, keyword arguments);
// errors here name the fields of layout_options.
namespace bulkgnn::session {

// How a run is laid out over MPI ranks (mpirun -np P ...).
struct layout_options {
  std::string grid = "replicated";  // replicated, 1.5d, 2d, 2d-summa or 3d
  int replication = 1;              // 1.5d: copies of each block row of A; 3d: 2D layers
  int feature_replication = 1;      // copies of each feature row over the ranks
  std::string partition = "block";  // block or metis
  std::string draw_at = "owner";    // 1.5d, 2d and 3d node-wise draws: owner or requester
  // Per rank, room for hot remote feature rows (partitioned features), in MiB,
  // chosen by "degree", "access" (first epoch) or "access-each-epoch".
  double feature_cache_mib = 0;
  std::string feature_cache_choice = "degree";
};

// The data a rank opened: a whole dataset, or its part of a partitioned
// dataset (open_shard). One is set.
struct run_data {
  std::optional<data::dataset> whole;
  std::optional<data::dataset_shard> part;
};

// A setting every rank must give alike: its name in the front end's
// vocabulary and its value in a canonical text (equal values, equal texts).
struct setting {
  std::string name;
  std::string value;
};

// The layout's fields as settings, named as layout_options names them.
[[nodiscard]] std::vector<setting> layout_settings(const layout_options& layout);

// This process's place among the ranks: rank 0 of 1 without MPI.
[[nodiscard]] int world_rank();
[[nodiscard]] int world_size();

// The part of the partitioned dataset at `dir` (bulkgnn partition) that this
// rank holds under `layout`: option_error naming layout_options.grid when the
// dataset has another number of parts than the layout needs, data_error
// naming the file this rank cannot read.
// With `features`, the part's feature rows are mapped too when this rank's
// feature group position is its part (else the cluster maps those of its
// position).
[[nodiscard]] data::dataset_shard open_shard(const std::filesystem::path& dir,
                                             const layout_options& layout, bool features);

// The ranks of a run that lays its data out itself (full-batch training),
// after the check run_session makes first: every rank opened the same
// dataset (by content) and gave the same `shared` settings, else a
// collective_error on every rank naming each difference. Traffic is counted
// in `log`. A process alone gets a self communicator.
[[nodiscard]] std::unique_ptr<comm::communicator> agreed_world(const data::dataset& ds,
                                                               const std::vector<setting>& shared,
                                                               comm::traffic_log& log);

class run_session {
 public:
  // Collective over every rank. Before anything else checks that every rank
  // opened the same dataset (by content) and gave the same layout and
  // `shared` settings: collective_error on every rank naming each one that
  // differs, and which ranks hold which value. option_error naming the
  // layout_options field for a layout that needs MPI in a process that runs
  // alone, or that the rank count cannot take.
  run_session(const data::dataset& ds, const layout_options& layout, bool partition_features,
              const std::vector<setting>& shared);
  // The same from this rank's part of a partitioned dataset (open_shard):
  // the rank reads no other rows of A. Alone, the one part is the whole
  // graph, which the caller samples itself.
  run_session(const data::dataset_shard& shard, const layout_options& layout,
              bool partition_features, const std::vector<setting>& shared);
  ~run_session();
  run_session(const run_session&) = delete;
  run_session& operator=(const run_session&) = delete;

  // Whether this process is one of several ranks (else: alone, whole graph).
  [[nodiscard]] bool distributed() const { return impl_ != nullptr; }
  [[nodiscard]] int rank() const;
  [[nodiscard]] int ranks() const;
  // Where the sampler reads rows of A (nullptr: the dataset's graph here).
  [[nodiscard]] sampler::row_source* rows();
  // What a data-parallel trainer needs (nullptr: this process alone).
  [[nodiscard]] trainer::data_parallel* data_parallel();
  // The part of each minibatch this rank samples, as data-parallel training
  // splits them (bulk_sampler::sample_slices); the whole minibatch alone.
  [[nodiscard]] sampler::minibatch_split minibatch_split();
  // {minibatch id, digest} of the whole minibatches of `plan` whose parts
  // every rank sampled, from each rank's destinations of its parts
  // (sampler::merge_part_digests); this rank's share of the minibatches
  // (collective).
  [[nodiscard]] std::vector<std::pair<std::int64_t, std::uint64_t>> merge_part_digests(
      const sampler::epoch_plan& plan, std::int64_t hops,
      std::span<const sampler::destination_edges> mine);
  // {minibatch id, digest} pairs of every rank, gathered (collective).
  [[nodiscard]] std::vector<std::pair<std::int64_t, std::uint64_t>> gather_digests(
      const std::vector<std::pair<std::int64_t, std::uint64_t>>& mine);
  // The sum of `value` over every rank (collective).
  [[nodiscard]] std::int64_t sum_over_ranks(std::int64_t value);
  // Every rank's `value`, by rank (collective).
  [[nodiscard]] std::vector<std::int64_t> gather_over_ranks(std::int64_t value);
  // Layout (grid, partitions, edge cuts) and every rank's traffic per stage
  // (collective); null for a process alone.
  [[nodiscard]] nlohmann::json report();
  // The feature cache's counts since the previous call, summed over the ranks,
  // then the cache refilled if `refill` and its choice says so (collective);
  // null without a feature cache.
  [[nodiscard]] nlohmann::json end_epoch(bool refill);

 private:
  struct impl;
  std::unique_ptr<impl> impl_;
};

// The traffic between successive reports (one epoch's, when fed the report
// taken at the end of every epoch; the first call gives everything before it,
// such as the cluster's setup): per stage, bytes sent and received summed over
// the ranks and the slowest rank's seconds in MPI.
class epoch_traffic {
 public:
  // {stage: {bytes_sent, bytes_received, seconds}} since the previous call;
  // null for a null report (a run that is not distributed).
  nlohmann::json since_previous(const nlohmann::json& report);

 private:
  nlohmann::json previous_by_rank_;
};

}  // namespace bulkgnn::session
