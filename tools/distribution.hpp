#pragma once

#include "bulkgnn/data/dataset.hpp"
#include "bulkgnn/sampler/row_source.hpp"
#include "bulkgnn/trainer/data_parallel.hpp"

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace bulkgnn::tools {

// The options that lay a run out over MPI ranks (mpirun -np P bulkgnn ...).
struct distribution_config {
  std::string grid = "replicated";
  int replication = 1;
  int feature_replication = 1;
  std::string partition = "block";
};

void add_distribution_options(CLI::App& cmd, distribution_config& config, bool with_features);

// A setting that every rank of an MPI run must give alike: the option's name
// and its value in a canonical text form (equal values, equal texts).
struct shared_setting {
  std::string name;
  std::string value;
};

// Throws internal_error naming each option of `cmd` that is neither shared
// (in `shared`, DATA, which ranks compare by content, or a distribution
// option) nor in `per_rank`: every option must be decided one way or the
// other, so that a new one cannot be forgotten.
void require_every_option_decided(const CLI::App& cmd, const std::vector<shared_setting>& shared,
                                  std::span<const std::string_view> per_rank);

// This process's place in a run: rank 0 of 1 without MPI.
[[nodiscard]] int world_rank();
[[nodiscard]] int world_size();

// A distributed run's state (communicators, shards, partitioned features);
// empty when this process runs alone with the default layout.
class distributed_run {
 public:
  // Collective over every rank. Before anything else checks that every rank
  // opened the same dataset (by content) and gave the same layout and
  // `shared` settings: collective_error on every rank naming each one that
  // differs, and which ranks hold which value. option_error for a layout
  // that needs MPI in a process that runs alone.
  distributed_run(const data::dataset& ds, const distribution_config& config,
                  bool partition_features, const std::vector<shared_setting>& shared);
  ~distributed_run();

  [[nodiscard]] bool active() const { return impl_ != nullptr; }
  [[nodiscard]] sampler::row_source* rows();
  [[nodiscard]] trainer::data_parallel* data_parallel();
  // {minibatch id, digest} pairs of every rank, gathered (collective).
  [[nodiscard]] std::vector<std::pair<std::int64_t, std::uint64_t>> gather_digests(
      const std::vector<std::pair<std::int64_t, std::uint64_t>>& mine);
  // The sum of `value` over every rank (collective).
  [[nodiscard]] std::int64_t sum_over_ranks(std::int64_t value);
  // Layout (grid, partitions, edge cuts) and every rank's traffic per stage
  // (collective).
  [[nodiscard]] nlohmann::json report();

 private:
  struct impl;
  std::unique_ptr<impl> impl_;
};

// One line per stage: bytes sent and received, summed over the ranks, and the
// largest rank's.
void print_traffic(const nlohmann::json& report);

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

// One line: bytes sent per stage over all ranks, from since_previous().
void print_epoch_traffic(const nlohmann::json& totals);

}  // namespace bulkgnn::tools
