#include "distribution.hpp"
#include "commands.hpp"

#include "bulkgnn/core/error.hpp"
#include "bulkgnn/core/grid.hpp"

#include <fmt/format.h>

#include <algorithm>

namespace bulkgnn::tools {

void add_distribution_options(CLI::App& cmd, session::layout_options& config, bool with_features) {
  // The names of --grid and --partition are checked by the session, on
  // every rank alike, so that under mpirun each rank ends normally.
  cmd.add_option("--grid", config.grid,
                 fmt::format("layout of the graph over MPI ranks: {} (2d-summa: CombBLAS) (train "
                             "--mode full-batch: {}; default 1d)",
                             grid_kind_names(minibatch_grids), grid_kind_names(full_batch_grids)))
      ->capture_default_str();
  cmd.add_option("--replication", config.replication,
                 "1.5d: copies of each block row of A; 3d: number of 2D layers")
      ->capture_default_str()
      ->check(integer_in(1, max_ranks));
  if (with_features) {
    cmd.add_option("--feature-replication", config.feature_replication,
                   "copies of each feature row over the ranks (features are partitioned by "
                   "vertex owner)")
        ->capture_default_str()
        ->check(integer_in(1, max_ranks));
    cmd.add_option("--feature-cache", config.feature_cache_mib,
                   "MiB per rank for copies of the most needed remote feature rows")
        ->capture_default_str();
    cmd.add_option("--feature-cache-choice", config.feature_cache_choice,
                   "which rows the feature cache keeps: degree (largest in-degree), access (most "
                   "fetched in the first epoch) or access-each-epoch (re-chosen every epoch)")
        ->capture_default_str();
  }
  cmd.add_option("--partition", config.partition,
                 "vertex partition for shards and features: block or metis")
      ->capture_default_str();
  cmd.add_option("--draw-at", config.draw_at,
                 "1.5d, 2d and 3d node-wise sampling: draw at the rows' owner (only drawn entries "
                 "travel) or at the requester (whole rows travel)")
      ->capture_default_str();
}

namespace {

// What add_distribution_options adds: shared by every rank, as the session
// checks.
constexpr std::string_view layout_flags[] = {
    "--grid",    "--replication",   "--feature-replication", "--partition",
    "--draw-at", "--feature-cache", "--feature-cache-choice"};

// Each field a library message may name, and the flag that sets it.
constexpr std::pair<std::string_view, std::string_view> flag_of_field[] = {
    {"layout_options.grid", "--grid"},
    {"layout_options.replication", "--replication"},
    {"layout_options.feature_replication", "--feature-replication"},
    {"layout_options.partition", "--partition"},
    {"layout_options.draw_at", "--draw-at"},
    {"layout_options.feature_cache_mib", "--feature-cache"},
    {"layout_options.feature_cache_choice", "--feature-cache-choice"},
    {"cluster_options.feature_replication", "--feature-replication"},
    {"cluster_options.partition", "--partition"},
    {"cluster_options.draw_at", "--draw-at"},
    {"cluster_options.feature_cache_bytes", "--feature-cache"},
    {"cluster_options.feature_cache_choice", "--feature-cache-choice"},
    {"execution_options.device", "--device"},
    {"execution_options.sample_on", "--sample-on"},
    {"placement_options.topology", "--topology"},
    {"placement_options.features", "--features"},
    {"placement_options.cache_fraction", "--cache-fraction"},
    {"placement_options.cache_policy", "--cache-policy"},
    {"sampling_plan.gather_features", "--gather-features"},
    {"sampler_options.kind", "--sampler"},
    {"sampler_options.fanouts", "--fanouts"},
    {"ogb_import_options.add_inverse_edges", "--add-inverse-edges"},
    {"ogb_import_options.edge_weight_column", "--edge-weight-column"},
    {"sampler_options.layers", "--layers"},
    {"sampler_options.replacement", "--replace"},
    {"sampler_options.weighted", "--weighted"},
    {"sampler_options.cache_dir", "--subgraph-cache"},
    {"train_options.normalize_features", "--normalize-features"},
    // Longer names first where one is the start of another.
    {"train_options.eval_every", "--eval-every"},
    {"train_options.eval_piece_rows", "--eval-piece-rows"},
    {"train_options.eval", "--eval"},
    {"train_options.exec", "--sample-on"},
    {"train_options.split", "--split"},
    {"train_options.layer", "--model"},
    {"train_options.checkpoint_dir", "--checkpoint-dir"},
    {"train_options.resume", "--resume"},
    {"train_options.epochs", "--epochs"},
    {"loader_options.batch_size", "--batch-size"},
    {"loader_options.bulk_queue", "--bulk-queue"},
    {"loader_options.bulk", "--bulk"},
    {"loader_options.ready_queue", "--ready-queue"},
    {"loader_options.queue_bytes", "--queue-bytes"},
    {"loader_options.max_minibatches", "--max-minibatches"},
    {"loader_options.subgraphs", "--sampler"},
    {"model_config.layers", "--layers"},
    {"model_config.hidden", "--hidden"},
    {"model_config.dropout", "--dropout"},
    {"adam_options.lr", "--lr"},
    {"adam_options.weight_decay", "--weight-decay"},
    {"link_train_options.hits_k", "--hits-k"},
    {"link_train_options.ranking_negatives", "--ranking-negatives"},
    {"train_options.node_embedding", "--node-embedding"},
    {"model_config.embedding_rows", "--node-embedding"},
    {"link_split_options.valid_fraction", "--link-split"},
    {"link_split_options.test_fraction", "--link-split"},
    {"link_split_options.negatives_per_positive", "--split-negatives"},
    {"negative_sampling.amount", "--neg-ratio"},
    {"negative_sampling.distribution", "--neg-distribution"},
    {"negative_sampling.mode", "--neg-mode"},
    {"negative_sampling.strict", "--strict-negatives"},
    {"link_options.batch_size", "--batch-size"},
    {"link_options.exclude", "--exclude"},
};

}  // namespace

void require_every_option_decided(const CLI::App& cmd, const std::vector<session::setting>& shared,
                                  std::span<const std::string_view> per_rank) {
  std::vector<std::string> decided(std::begin(layout_flags), std::end(layout_flags));
  for (const auto& s : shared) decided.push_back(s.name);
  decided.emplace_back("DATA");
  std::vector<std::string> undecided;
  for (const CLI::Option* option : cmd.get_options()) {
    const auto& name = option->get_name();
    const bool is_shared = std::ranges::find(decided, name) != decided.end();
    const bool is_per_rank = std::ranges::find(per_rank, name) != per_rank.end();
    if (is_shared == is_per_rank) undecided.push_back(name);
  }
  if (!undecided.empty())
    throw internal_error(
        fmt::format("{}: {} must be listed either as shared by every MPI rank or as per rank",
                    cmd.get_name(), fmt::join(undecided, ", ")));
}

std::string in_flag_terms(std::string message) {
  for (const auto& [field, flag] : flag_of_field)
    for (auto at = message.find(field); at != std::string::npos; at = message.find(field, at))
      message.replace(at, field.size(), flag);
  return message;
}

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

void print_feature_cache(const nlohmann::json& counts) {
  if (counts.is_null()) return;
  fmt::print(
      "  feature cache: hit rate {:.1f}% ({} of {} remote rows), {:.4g} MB not sent, {} "
      "rows cached over all ranks\n",
      100 * counts.at("hit_rate").get<double>(), counts.at("hits").get<std::int64_t>(),
      counts.at("hits").get<std::int64_t>() + counts.at("misses").get<std::int64_t>(),
      counts.at("bytes_saved").get<double>() / 1e6, counts.at("cached_rows").get<std::int64_t>());
}

void print_epoch_traffic(const nlohmann::json& totals) {
  if (totals.is_null()) return;
  fmt::print("  sent over MPI, all ranks:");
  for (const char* stage : {"sampling", "features", "gradients"})
    fmt::print(" {} {:.4g} MB", stage, totals.at(stage).at("bytes_sent").get<double>() / 1e6);
  fmt::print("\n");
}

}  // namespace bulkgnn::tools
