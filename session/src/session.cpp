#include "bulkgnn/session/session.hpp"

#include "bulkgnn/comm/self_communicator.hpp"
#include "bulkgnn/core/error.hpp"
#include "bulkgnn/sampler/part_digests.hpp"

#include <fmt/format.h>

#include <cmath>

#if BULKGNN_HAVE_MPI
#include "bulkgnn/comm/mpi_communicator.hpp"
#include "bulkgnn/data/fingerprint.hpp"
#include "bulkgnn/distributed/agreement.hpp"
#include "bulkgnn/distributed/cluster.hpp"
#include "bulkgnn/distributed/mpi_session.hpp"
#endif

#include <algorithm>

namespace bulkgnn::session {
namespace {

// make_partition reads the name only when it partitions, which a run
// without MPI never does.
void require_partition_name(const std::string& name) {
  if (name != "block" && name != "metis")
    throw option_error(
        fmt::format("layout_options.partition must be block or metis; got '{}'", name));
}

// A process alone holds every part of its minibatches.
std::vector<std::pair<std::int64_t, std::uint64_t>> merge_alone(
    const sampler::epoch_plan& plan, std::int64_t hops,
    std::span<const sampler::destination_edges> mine) {
  comm::traffic_log uncounted;
  comm::self_communicator alone("digests", uncounted);
  return sampler::merge_part_digests(alone, plan, hops, mine);
}

}  // namespace

std::vector<setting> layout_settings(const layout_options& layout) {
  return {{"layout_options.grid", layout.grid},
          {"layout_options.replication", std::to_string(layout.replication)},
          {"layout_options.feature_replication", std::to_string(layout.feature_replication)},
          {"layout_options.partition", layout.partition},
          {"layout_options.draw_at", layout.draw_at},
          {"layout_options.feature_cache_mib", fmt::format("{}", layout.feature_cache_mib)},
          {"layout_options.feature_cache_choice", layout.feature_cache_choice}};
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

struct run_session::impl {
  template <class Input, class... Extra>
  impl(const Input& input, const distributed::cluster_options& options, Extra... extra)
      : cluster(input, options, extra...),
        parallel{.ranks = &cluster.gradients(),
                 .sampling = &cluster.sampling(),
                 .rows = &cluster.rows(),
                 .features = cluster.features(),
                 .abort_all = [](const std::string& message) {
                   distributed::mpi_session::abort_all(message);
                 }} {}
  distributed::cluster cluster;
  trainer::data_parallel parallel;
};

namespace {

// Whole bytes for a cache of `mib` MiB.
std::int64_t cache_bytes(double mib) {
  BULKGNN_EXPECTS(std::isfinite(mib) && mib >= 0 && mib <= 1e9,
                  "layout_options.feature_cache_mib must be a size in [0, 1e9] MiB, got {}", mib);
  return static_cast<std::int64_t>(mib * 1024 * 1024);
}

distributed::cluster_options cluster_options_from(const layout_options& layout) {
  return {
      .grid = parse_grid_kind(layout.grid, minibatch_grids, "minibatch sampling"),
      .replication = layout.replication,
      .feature_replication = layout.feature_replication,
      .partition = layout.partition,
      .draw_at = distributed::parse_draw_location(layout.draw_at),
      .feature_cache = {.bytes = cache_bytes(layout.feature_cache_mib),
                        .choice = distributed::parse_cache_choice(layout.feature_cache_choice)}};
}

// The first collective of a run: ranks that disagree on anything below would
// crash, hang or silently differ in the collectives that follow.
void require_same_settings_on_every_rank(const std::string& data_fingerprint,
                                         const layout_options& layout,
                                         const std::vector<setting>& shared) {
  std::vector<distributed::shared_setting> settings{{"DATA", data_fingerprint}};
  for (const auto& s : layout_settings(layout)) settings.push_back({s.name, s.value});
  for (const auto& s : shared) settings.push_back({s.name, s.value});
  comm::traffic_log uncounted;
  comm::mpi_communicator agreement(MPI_COMM_WORLD, "agreement", uncounted);
  distributed::require_same_settings(agreement, settings);
}

// A process alone runs the whole graph here: no layout over ranks.
void require_layout_alone(const layout_options& layout) {
  require_partition_name(layout.partition);
  const auto options = cluster_options_from(layout);
  (void)distributed::minibatch_grid(options.grid, 1, options.replication);
  BULKGNN_EXPECTS(
      options.grid == grid_kind::replicated && layout.feature_replication == 1 &&
          layout.feature_cache_mib == 0,
      "layout_options.grid/layout_options.feature_replication/layout_options.feature_cache_mib "
      "lay a run out over MPI ranks: start it with mpirun -np P");
}

// The cluster's options, once every rank agreed on the layout.
distributed::cluster_options agreed_options(const layout_options& layout) {
  try {
    require_partition_name(layout.partition);
    auto options = cluster_options_from(layout);
    distributed::validate(options, world_size());
    return options;
  } catch (const option_error& e) {
    // Every rank has the same layout and rank count, so every rank throws
    // this here: each can end normally.
    throw distributed::collective_error(e.what());
  }
}

}  // namespace

data::dataset_shard open_shard(const std::filesystem::path& dir, const layout_options& layout,
                               bool features) {
  const auto options = cluster_options_from(layout);
  const auto grid = distributed::minibatch_grid(options.grid, world_size(), options.replication);
  const int parts = distributed::grid_partition_parts(grid);
  const int stored = data::partitioned_dataset_parts(dir);
  if (stored != parts)
    throw option_error(fmt::format(
        "{} is partitioned into {} parts, but layout_options.grid {} over {} ranks "
        "(layout_options.replication {}) reads {}: partition it with {} parts",
        dir.string(), stored, layout.grid, world_size(), layout.replication, parts, parts));
  const int part = distributed::part_of_rank(grid, world_rank());
  // partitioned_features places part q on feature group position q.
  const bool own_features =
      features && options.feature_replication >= 1 &&
      world_rank() % std::max(1, world_size() / options.feature_replication) == part;
  return data::dataset_shard::open(dir, part, own_features);
}

std::unique_ptr<comm::communicator> agreed_world(const data::dataset& ds,
                                                 const std::vector<setting>& shared,
                                                 comm::traffic_log& log) {
  if (!distributed::mpi_session::active())
    return std::make_unique<comm::self_communicator>("world", log);
  require_same_settings_on_every_rank(data::content_fingerprint(ds), layout_options{}, shared);
  return std::make_unique<comm::mpi_communicator>(MPI_COMM_WORLD, "world", log);
}

run_session::run_session(const data::dataset& ds, const layout_options& layout,
                         bool partition_features, const std::vector<setting>& shared) {
  if (!distributed::mpi_session::active()) {
    require_layout_alone(layout);
    return;
  }
  require_same_settings_on_every_rank(data::content_fingerprint(ds), layout, shared);
  impl_ = std::make_unique<impl>(ds, agreed_options(layout), partition_features);
}

run_session::run_session(const data::dataset_shard& shard, const layout_options& layout,
                         bool partition_features, const std::vector<setting>& shared) {
  if (!distributed::mpi_session::active()) {
    require_layout_alone(layout);
    return;
  }
  require_same_settings_on_every_rank(shard.fingerprint(), layout, shared);
  impl_ = std::make_unique<impl>(shard, agreed_options(layout), partition_features);
}

int run_session::rank() const { return impl_ ? world_rank() : 0; }
int run_session::ranks() const { return impl_ ? world_size() : 1; }

sampler::row_source* run_session::rows() { return impl_ ? &impl_->cluster.rows() : nullptr; }

trainer::data_parallel* run_session::data_parallel() { return impl_ ? &impl_->parallel : nullptr; }

sampler::minibatch_split run_session::minibatch_split() {
  if (!impl_) return {};
  return {.slice = impl_->cluster.rank(),
          .slices = impl_->cluster.ranks(),
          .ranks = &impl_->cluster.sampling()};
}

std::vector<std::pair<std::int64_t, std::uint64_t>> run_session::merge_part_digests(
    const sampler::epoch_plan& plan, std::int64_t hops,
    std::span<const sampler::destination_edges> mine) {
  if (!impl_) return merge_alone(plan, hops, mine);
  return sampler::merge_part_digests(impl_->cluster.world(), plan, hops, mine);
}

std::vector<std::pair<std::int64_t, std::uint64_t>> run_session::gather_digests(
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

std::int64_t run_session::sum_over_ranks(std::int64_t value) {
  if (!impl_) return value;
  return impl_->cluster.world().all_reduce(value, comm::reduce_op::sum);
}

std::vector<std::int64_t> run_session::gather_over_ranks(std::int64_t value) {
  if (!impl_) return {value};
  return impl_->cluster.world().all_gather_v(std::span<const std::int64_t>(&value, 1));
}

nlohmann::json run_session::end_epoch(bool refill) {
  if (!impl_) return nullptr;
  return impl_->cluster.end_epoch(refill);
}

nlohmann::json run_session::report() {
  if (!impl_) return nullptr;
  return {{"ranks", impl_->cluster.ranks()},
          {"layout", impl_->cluster.layout()},
          {"traffic_by_rank", impl_->cluster.traffic_by_rank()}};
}

run_session::~run_session() = default;

#else

int world_rank() { return 0; }
int world_size() { return 1; }

struct run_session::impl {};

namespace {
// distributed/ parses these names under MPI; without it they are still
// checked, so that a misspelt option fails alike in every build.
void require_known_names(const layout_options& layout) {
  require_partition_name(layout.partition);
  if (layout.draw_at != "owner" && layout.draw_at != "requester")
    throw option_error(
        fmt::format("layout_options.draw_at must be owner or requester; got '{}'", layout.draw_at));
  const auto& choice = layout.feature_cache_choice;
  if (choice != "degree" && choice != "access" && choice != "access-each-epoch")
    throw option_error(fmt::format(
        "layout_options.feature_cache_choice must be degree, access or access-each-epoch; got "
        "'{}'",
        choice));
}

void require_layout_without_mpi(const layout_options& layout) {
  require_known_names(layout);
  BULKGNN_EXPECTS(
      layout.grid == "replicated" && layout.replication == 1 && layout.feature_replication == 1 &&
          layout.feature_cache_mib == 0,
      "layout_options.grid/layout_options.replication/layout_options.feature_replication need "
      "MPI, and this build has none");
}
}  // namespace

data::dataset_shard open_shard(const std::filesystem::path& dir, const layout_options& layout,
                               bool features) {
  require_layout_without_mpi(layout);
  const int stored = data::partitioned_dataset_parts(dir);
  if (stored != 1)
    throw option_error(
        fmt::format("{} is partitioned into {} parts; a process alone reads a dataset of 1 part",
                    dir.string(), stored));
  return data::dataset_shard::open(dir, 0, features);
}

std::unique_ptr<comm::communicator> agreed_world(const data::dataset&, const std::vector<setting>&,
                                                 comm::traffic_log& log) {
  return std::make_unique<comm::self_communicator>("world", log);
}

run_session::run_session(const data::dataset&, const layout_options& layout, bool,
                         const std::vector<setting>&) {
  require_layout_without_mpi(layout);
}
run_session::run_session(const data::dataset_shard&, const layout_options& layout, bool,
                         const std::vector<setting>&) {
  require_layout_without_mpi(layout);
}
run_session::~run_session() = default;
int run_session::rank() const { return 0; }
int run_session::ranks() const { return 1; }
sampler::row_source* run_session::rows() { return nullptr; }
trainer::data_parallel* run_session::data_parallel() { return nullptr; }
sampler::minibatch_split run_session::minibatch_split() { return {}; }
std::vector<std::pair<std::int64_t, std::uint64_t>> run_session::merge_part_digests(
    const sampler::epoch_plan& plan, std::int64_t hops,
    std::span<const sampler::destination_edges> mine) {
  return merge_alone(plan, hops, mine);
}
std::vector<std::pair<std::int64_t, std::uint64_t>> run_session::gather_digests(
    const std::vector<std::pair<std::int64_t, std::uint64_t>>& mine) {
  return mine;
}
std::int64_t run_session::sum_over_ranks(std::int64_t value) { return value; }
std::vector<std::int64_t> run_session::gather_over_ranks(std::int64_t value) { return {value}; }
nlohmann::json run_session::report() { return nullptr; }
nlohmann::json run_session::end_epoch(bool) { return nullptr; }

#endif

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

}  // namespace bulkgnn::session
