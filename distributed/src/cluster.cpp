#include "bulkgnn/distributed/cluster.hpp"

#include "bulkgnn/core/error.hpp"

#include <algorithm>

namespace bulkgnn::distributed {

void validate(const cluster_options& options, int ranks) {
  (void)minibatch_grid(options.grid, ranks, options.replication);
  BULKGNN_EXPECTS(options.feature_replication >= 1 && ranks % options.feature_replication == 0,
                  "cluster_options.feature_replication {} must divide the {} ranks",
                  options.feature_replication, ranks);
}

cluster::cluster(const cluster_options& options)
    : options_(options),
      world_(MPI_COMM_WORLD, "world", log_),
      grid_(minibatch_grid(options.grid, world_.size(), options.replication)),
      sampling_(MPI_COMM_WORLD, "sampling", log_),
      features_comm_(MPI_COMM_WORLD, "features", log_),
      gradients_(MPI_COMM_WORLD, "gradients", log_) {
  validate(options, ranks());
}

cluster::cluster(const data::dataset& ds, const cluster_options& options, bool partition_features)
    : cluster(options) {
  const auto graph = ds.graph();
  grid_partition_ =
      make_partition(options.partition, graph, grid_partition_parts(grid_), options.partition_seed);
  layout_["grid"] = {{"kind", grid_kind_name(options.grid)},
                     {"replication", options.replication},
                     {"partition", options.partition},
                     {"parts", grid_partition_.parts},
                     {"edge_cut", edge_cut(graph, grid_partition_)},
                     {"edges", graph.nnz()}};
  rows_ = make_row_source(grid_, sampling_, graph, grid_partition_, options.draw_at);
  if (partition_features && !ds.features().empty()) {
    const int parts = ranks() / options.feature_replication;
    // Same method and part count as the grid's: reuse it (METIS is the costly step).
    feature_partition_ =
        parts == grid_partition_.parts
            ? grid_partition_
            : make_partition(options.partition, graph, parts, options.partition_seed);
    features_ = std::make_unique<partitioned_features>(
        features_comm_, ds.features(), *feature_partition_, options.feature_replication,
        options.feature_cache, graph);
    layout_["features"] = {{"replication", options.feature_replication},
                           {"parts", parts},
                           {"edge_cut", edge_cut(graph, *feature_partition_)},
                           {"local_rows", features_->local_rows()},
                           {"cache_rows_per_rank", features_->cache_capacity_rows()},
                           {"cache_choice", cache_choice_name(options.feature_cache.choice)}};
  }
}

cluster::cluster(const data::dataset_shard& shard, const cluster_options& options,
                 bool partition_features)
    : cluster(options) {
  const int parts = grid_partition_parts(grid_);
  const int part = part_of_rank(grid_, rank());
  BULKGNN_EXPECTS(shard.parts() == parts && shard.part() == part,
                  "grid {}: rank {} holds part {} of {}, but was given part {} of {}",
                  grid_kind_name(options.grid), rank(), part, parts, shard.part(), shard.parts());
  // Rows are looked up by vertex, never by new id: no old_id.
  grid_partition_ = partition_from_owners(shard.owners(), parts, relabelling::by_vertex);
  const auto& how = shard.manifest().at("partition");
  layout_["grid"] = {{"kind", grid_kind_name(options.grid)},
                     {"replication", options.replication},
                     {"partition", how.at("method")},
                     {"parts", parts},
                     {"edge_cut", how.at("edge_cut")},
                     {"edges", shard.num_edges()},
                     {"from_shards", true}};
  rows_ = make_row_source(grid_, sampling_, part_rows{shard.rows(), shard.weighted()},
                          grid_partition_, options.draw_at);
  if (!partition_features || shard.feature_dim() == 0) return;
  const int feature_parts = ranks() / options.feature_replication;
  BULKGNN_EXPECTS(feature_parts == parts,
                  "cluster_options.feature_replication {} splits the features into {} parts over "
                  "{} ranks, but the partitioned dataset has {}: give "
                  "cluster_options.feature_replication {}",
                  options.feature_replication, feature_parts, ranks(), parts, ranks() / parts);
  // The feature group's position, as partitioned_features places its rows.
  feature_rows_ = shard.feature_rows_of(rank() % feature_parts);
  features_ = std::make_unique<partitioned_features>(
      features_comm_, feature_rows_.rows, grid_partition_, options.feature_replication,
      options.feature_cache, [&] { return shard.in_degrees(); });
  layout_["features"] = {{"replication", options.feature_replication},
                         {"parts", parts},
                         {"edge_cut", how.at("edge_cut")},
                         {"local_rows", features_->local_rows()},
                         {"cache_rows_per_rank", features_->cache_capacity_rows()},
                         {"cache_choice", cache_choice_name(options.feature_cache.choice)}};
}

nlohmann::json cluster::end_epoch(bool refill) {
  // The capacity is a function of options shared by every rank: all return here alike.
  if (!features_ || features_->cache_capacity_rows() == 0) return nullptr;
  const auto c = features_->take_cache_counts();
  std::vector<std::int64_t> sums{c.local, c.hits, c.misses, c.bytes_saved, c.cached_rows};
  world_.all_reduce(std::span<std::int64_t>(sums));
  const auto remote = sums[1] + sums[2];
  nlohmann::json counts{{"local", sums[0]},
                        {"hits", sums[1]},
                        {"misses", sums[2]},
                        {"hit_rate", remote > 0 ? static_cast<double>(sums[1]) / remote : 0.0},
                        {"bytes_saved", sums[3]},
                        {"cached_rows", sums[4]}};
  if (refill) features_->end_epoch();
  return counts;
}

nlohmann::json cluster::traffic_by_rank() {
  // Stage names are the same on every rank; gather each stage's counters.
  static const char* const stage_names[] = {"sampling", "features", "gradients", "world"};
  const auto mine = log_.all();
  nlohmann::json by_rank = nlohmann::json::array();
  std::vector<std::int64_t> values;
  for (const char* stage : stage_names) {
    const auto found = mine.find(stage);
    const comm::traffic t = found == mine.end() ? comm::traffic{} : found->second;
    values.insert(values.end(), {t.bytes_sent, t.bytes_received, t.calls,
                                 static_cast<std::int64_t>(t.seconds * 1e6)});
  }
  const auto all = world_.all_gather_v(std::span<const std::int64_t>(values));
  const std::size_t per_rank = values.size();
  for (int r = 0; r < ranks(); ++r) {
    nlohmann::json stages = nlohmann::json::object();
    for (std::size_t s = 0; s < std::size(stage_names); ++s) {
      const auto* v = &all[r * per_rank + 4 * s];
      stages[stage_names[s]] = {{"bytes_sent", v[0]},
                                {"bytes_received", v[1]},
                                {"calls", v[2]},
                                {"seconds", static_cast<double>(v[3]) / 1e6}};
    }
    by_rank.push_back(std::move(stages));
  }
  return by_rank;
}

}  // namespace bulkgnn::distributed
