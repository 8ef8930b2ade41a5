#include "distribution.hpp"
#include "commands.hpp"

#include "bulkgnn/core/error.hpp"

#include <fmt/format.h>

#if BULKGNN_HAVE_MPI
#include "bulkgnn/comm/mpi_communicator.hpp"
#include "bulkgnn/data/fingerprint.hpp"
#include "bulkgnn/distributed/agreement.hpp"
#include "bulkgnn/distributed/cluster.hpp"
#include "bulkgnn/distributed/mpi_session.hpp"
#endif

#include <algorithm>

namespace bulkgnn::tools {

void add_distribution_options(CLI::App& cmd, distribution_config& config, bool with_features) {
  // The names of --grid and --partition are checked by distributed_run, on
  // every rank alike, so that under mpirun each rank ends normally.
  cmd.add_option("--grid", config.grid,
                 "layout of the graph over MPI ranks: replicated, 1.5d, 2d or 3d")
      ->capture_default_str();
  cmd.add_option("--replication", config.replication,
                 "1.5d: copies of each block row of A; 3d: number of 2D layers")
      ->capture_default_str()
      ->check(integer_in(1, max_ranks));
  if (with_features)
    cmd.add_option("--feature-replication", config.feature_replication,
                   "copies of each feature row over the ranks (features are partitioned by "
                   "vertex owner)")
        ->capture_default_str()
        ->check(integer_in(1, max_ranks));
  cmd.add_option("--partition", config.partition,
                 "vertex partition for shards and features: block or metis")
      ->capture_default_str();
}

namespace {

// What add_distribution_options adds, all shared.
// make_partition reads the name only when it partitions, which a run
// without MPI never does.
void require_partition_name(const std::string& name) {
  if (name != "block" && name != "metis")
    throw option_error(fmt::format("--partition must be block or metis; got '{}'", name));
}

std::vector<shared_setting> layout_settings(const distribution_config& config) {
  return {{"--grid", config.grid},
          {"--replication", std::to_string(config.replication)},
          {"--feature-replication", std::to_string(config.feature_replication)},
          {"--partition", config.partition}};
}

}  // namespace

void require_every_option_decided(const CLI::App& cmd, const std::vector<shared_setting>& shared,
                                  std::span<const std::string_view> per_rank) {
  auto decided = layout_settings({});
  decided.insert(decided.end(), shared.begin(), shared.end());
  decided.push_back({"DATA", {}});
  std::vector<std::string> undecided;
  for (const CLI::Option* option : cmd.get_options()) {
    const auto& name = option->get_name();
    const bool is_shared = std::ranges::find(decided, name, &shared_setting::name) != decided.end();
    const bool is_per_rank = std::ranges::find(per_rank, name) != per_rank.end();
    if (is_shared == is_per_rank) undecided.push_back(name);
  }
  if (!undecided.empty())
    throw internal_error(
        fmt::format("{}: {} must be listed either as shared by every MPI rank or as per rank",
                    cmd.get_name(), fmt::join(undecided, ", ")));
}

#if BULKGNN_HAVE_MPI

int world_rank() {
  if (!distributed::mpi_session::active()) return 0;
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  return rank;
}

int world_size() {
  if (!distributed::mpi_session::active()) return 1;
  int size = 1;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  return size;
}

struct distributed_run::impl {
  impl(const data::dataset& ds, const distributed::cluster_options& options, bool features)
      : cluster(ds, options, features),
        parallel{.ranks = &cluster.gradients(),
                 .rows = &cluster.rows(),
                 .features = cluster.features(),
                 .abort_all = [](const std::string& message) {
                   distributed::mpi_session::abort_all(message);
                 }} {}
  distributed::cluster cluster;
  trainer::data_parallel parallel;
};

namespace {

distributed::cluster_options cluster_options_from(const distribution_config& config) {
  return {.grid = distributed::parse_grid_kind(config.grid),
          .replication = config.replication,
          .feature_replication = config.feature_replication,
          .partition = config.partition};
}

// The first collective of a run: ranks that disagree on anything below would
// crash, hang or silently differ in the collectives that follow.
void require_same_settings_on_every_rank(const data::dataset& ds, const distribution_config& config,
                                         const std::vector<shared_setting>& shared) {
  std::vector<distributed::shared_setting> settings{{"DATA", data::content_fingerprint(ds)}};
  for (const auto& s : layout_settings(config)) settings.push_back({s.name, s.value});
  for (const auto& s : shared) settings.push_back({s.name, s.value});
  comm::traffic_log uncounted;
  comm::mpi_communicator agreement(MPI_COMM_WORLD, "agreement", uncounted);
  distributed::require_same_settings(agreement, settings);
}

}  // namespace

distributed_run::distributed_run(const data::dataset& ds, const distribution_config& config,
                                 bool partition_features,
                                 const std::vector<shared_setting>& shared) {
  if (!distributed::mpi_session::active()) {
    require_partition_name(config.partition);
    const auto options = cluster_options_from(config);
    distributed::validate_grid(options.grid, 1, options.replication);
    BULKGNN_EXPECTS(
        options.grid == distributed::grid_kind::replicated && config.feature_replication == 1,
        "--grid/--feature-replication lay a run out over MPI ranks: start it with "
        "mpirun -np P bulkgnn ...");
    return;
  }
  require_same_settings_on_every_rank(ds, config, shared);
  distributed::cluster_options options;
  try {
    require_partition_name(config.partition);
    options = cluster_options_from(config);
    distributed::validate(options, world_size());
  } catch (const option_error& e) {
    // Every rank has the same layout options and rank count, so every rank
    // throws this here: each can end normally.
    throw distributed::collective_error(e.what());
  }
  impl_ = std::make_unique<impl>(ds, options, partition_features);
}

sampler::row_source* distributed_run::rows() { return impl_ ? &impl_->cluster.rows() : nullptr; }

trainer::data_parallel* distributed_run::data_parallel() {
  return impl_ ? &impl_->parallel : nullptr;
}

std::vector<std::pair<std::int64_t, std::uint64_t>> distributed_run::gather_digests(
    const std::vector<std::pair<std::int64_t, std::uint64_t>>& mine) {
  if (!impl_) return mine;
  std::vector<std::int64_t> ids;
  std::vector<std::uint64_t> digests;
  for (const auto& [id, digest] : mine) {
    ids.push_back(id);
    digests.push_back(digest);
  }
  auto& world = impl_->cluster.world();
  const auto all_ids = world.all_gather_v(std::span<const std::int64_t>(ids));
  const auto all_digests = world.all_gather_v(std::span<const std::uint64_t>(digests));
  std::vector<std::pair<std::int64_t, std::uint64_t>> all;
  for (std::size_t i = 0; i < all_ids.size(); ++i) all.emplace_back(all_ids[i], all_digests[i]);
  return all;
}

std::int64_t distributed_run::sum_over_ranks(std::int64_t value) {
  if (!impl_) return value;
  return impl_->cluster.world().all_reduce(value, comm::reduce_op::sum);
}

nlohmann::json distributed_run::report() {
  if (!impl_) return nullptr;
  return {{"ranks", impl_->cluster.ranks()},
          {"layout", impl_->cluster.layout()},
          {"traffic_by_rank", impl_->cluster.traffic_by_rank()}};
}

distributed_run::~distributed_run() = default;

#else

int world_rank() { return 0; }
int world_size() { return 1; }

struct distributed_run::impl {};

distributed_run::distributed_run(const data::dataset&, const distribution_config& config, bool,
                                 const std::vector<shared_setting>&) {
  require_partition_name(config.partition);
  BULKGNN_EXPECTS(
      config.grid == "replicated" && config.replication == 1 && config.feature_replication == 1,
      "--grid/--replication/--feature-replication need MPI, and this build has none");
}
distributed_run::~distributed_run() = default;
sampler::row_source* distributed_run::rows() { return nullptr; }
trainer::data_parallel* distributed_run::data_parallel() { return nullptr; }
std::vector<std::pair<std::int64_t, std::uint64_t>> distributed_run::gather_digests(
    const std::vector<std::pair<std::int64_t, std::uint64_t>>& mine) {
  return mine;
}
std::int64_t distributed_run::sum_over_ranks(std::int64_t value) { return value; }
nlohmann::json distributed_run::report() { return nullptr; }

#endif

void print_traffic(const nlohmann::json& report) {
  if (report.is_null()) return;
  const auto& by_rank = report.at("traffic_by_rank");
  for (const char* stage : {"sampling", "features", "gradients"}) {
    std::int64_t sent = 0, received = 0, largest = 0;
    double seconds = 0;
    for (const auto& rank : by_rank) {
      const auto& t = rank.at(stage);
      sent += t.at("bytes_sent").get<std::int64_t>();
      received += t.at("bytes_received").get<std::int64_t>();
      largest = std::max(largest, t.at("bytes_sent").get<std::int64_t>());
      seconds = std::max(seconds, t.at("seconds").get<double>());
    }
    fmt::print(
        "  {:<10} sent {:>10.4g} MB  received {:>10.4g} MB  (largest rank {:.4g} MB, {:.3f} s "
        "in MPI)\n",
        stage, static_cast<double>(sent) / 1e6, static_cast<double>(received) / 1e6,
        static_cast<double>(largest) / 1e6, seconds);
  }
}

nlohmann::json epoch_traffic::since_previous(const nlohmann::json& report) {
  if (report.is_null()) return nullptr;
  const auto& by_rank = report.at("traffic_by_rank");
  BULKGNN_EXPECTS(previous_by_rank_.is_null() || previous_by_rank_.size() == by_rank.size(),
                  "epoch_traffic: {} ranks reported, {} before", by_rank.size(),
                  previous_by_rank_.size());
  nlohmann::json totals = nlohmann::json::object();
  for (const char* stage : {"sampling", "features", "gradients"}) {
    std::int64_t sent = 0, received = 0;
    double seconds = 0;
    for (std::size_t r = 0; r < by_rank.size(); ++r) {
      const auto& now = by_rank[r].at(stage);
      const auto before = [&](const char* field) -> nlohmann::json {
        if (previous_by_rank_.is_null()) return 0;
        return previous_by_rank_.at(r).at(stage).at(field);
      };
      sent += now.at("bytes_sent").get<std::int64_t>() - before("bytes_sent").get<std::int64_t>();
      received += now.at("bytes_received").get<std::int64_t>() -
                  before("bytes_received").get<std::int64_t>();
      seconds =
          std::max(seconds, now.at("seconds").get<double>() - before("seconds").get<double>());
    }
    totals[stage] = {{"bytes_sent", sent}, {"bytes_received", received}, {"seconds", seconds}};
  }
  previous_by_rank_ = by_rank;
  return totals;
}

void print_epoch_traffic(const nlohmann::json& totals) {
  if (totals.is_null()) return;
  fmt::print("  sent over MPI, all ranks:");
  for (const char* stage : {"sampling", "features", "gradients"})
    fmt::print(" {} {:.4g} MB", stage, totals.at(stage).at("bytes_sent").get<double>() / 1e6);
  fmt::print("\n");
}

}  // namespace bulkgnn::tools
