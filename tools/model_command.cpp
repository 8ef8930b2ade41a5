#include "commands.hpp"

#include "bulkgnn/core/atomic_file.hpp"
#include "bulkgnn/core/error.hpp"
#include "bulkgnn/core/grid.hpp"
#include "bulkgnn/data/dataset.hpp"
#include "bulkgnn/distributed/cost_model.hpp"
#include "bulkgnn/distributed/partition.hpp"
#include "bulkgnn/fullbatch/closed_forms.hpp"
#include "bulkgnn/sampler/sampler_table.hpp"
#include "bulkgnn/trainer/layer_table.hpp"
#include "bulkgnn/trainer/model.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include <cmath>
#include <memory>
#include <optional>

namespace bulkgnn::tools {

namespace {

namespace cost = distributed::cost;

// The samplers whose traffic the cost model predicts (their table entry names
// a cost family).
std::vector<std::string> modelled_samplers() {
  std::vector<std::string> names;
  for (const auto& entry : sampler::sampler_table())
    if (!entry.cost_family.empty()) names.emplace_back(entry.name);
  return names;
}

cost::sampler_family cost_family_of(const std::string& sampler_name) {
  const auto family = sampler::find_sampler(sampler_name).cost_family;
  if (family == "ladies") return cost::sampler_family::ladies;
  if (family == "fastgcn") return cost::sampler_family::fastgcn;
  BULKGNN_EXPECTS(family == "node-wise", "--sampler {}: the cost model does not predict it yet",
                  sampler_name);
  return cost::sampler_family::node_wise;
}

struct model_config {
  std::string mode = "minibatch";
  std::string model = "gcn";  // full-batch layers
  int layers = 2;             // full-batch depth
  std::string partition = "block";
  int seed = 0;  // the METIS partition's, as train's --seed
  std::string data;
  std::string split;
  std::int64_t nodes = 0;
  std::int64_t edges = 0;
  std::int64_t train = 0;
  double second_moment = 0;
  std::int64_t features = 128;
  std::int64_t classes = 0;
  std::int64_t hidden = 256;
  std::int64_t parameters = 0;
  std::int64_t batch_size = 1024;
  std::int64_t bulk = 32;
  std::int64_t max_minibatches = 0;
  std::string fanouts = "15,10,5";
  std::string grid = "all";
  int replication = 1;
  int feature_replication = 1;
  std::string ranks = "1,2,4,8,16,32,64,128,256,512,1024";
  bool weighted = false;
  std::string draw_at = "owner";
  std::string sampler = "sage";
  double feature_cache_mib = 0;
  double bandwidth_gbs = 25;
  double latency_us = 2;
  std::string metrics_out;
};

// The grids --grid names among those `mode` runs on: all of them for "all".
std::vector<grid_kind> grids_of(const std::string& name, std::span<const grid_kind> accepted,
                                std::string_view mode) {
  if (name == "all") return {accepted.begin(), accepted.end()};
  return {parse_grid_kind(name, accepted, mode)};
}

// Statistics measured from DATA when given (n, nnz, the (in, out, train)
// degree histogram, the training split), else synthesised from the options.
cost::graph_stats stats_of(model_config& c) {
  if (c.data.empty()) {
    BULKGNN_EXPECTS(c.nodes > 0 && c.edges >= 0,
                    "model: give DATA, or --nodes and --edges (got {} and {})", c.nodes, c.edges);
    BULKGNN_EXPECTS(c.train <= c.nodes, "--train {}: more training vertices than --nodes {}",
                    c.train, c.nodes);
    return cost::synthetic_stats(c.nodes, c.edges, c.train > 0 ? c.train : c.nodes,
                                 c.second_moment);
  }
  BULKGNN_EXPECTS(c.nodes == 0 && c.edges == 0,
                  "--nodes and --edges describe a graph without DATA; DATA {} has its own", c.data);
  const auto ds = data::dataset::open(c.data);
  BULKGNN_EXPECTS(c.train <= ds.num_nodes(), "--train {}: more training vertices than the {} of {}",
                  c.train, ds.num_nodes(), c.data);
  std::vector<bool> mask;
  if (!ds.splits().empty()) {
    mask.assign(static_cast<std::size_t>(ds.num_nodes()), false);
    for (const vertex_t v : ds.find_split(c.split).train) mask[v] = true;
  }
  const auto g = ds.graph();
  std::vector<std::int64_t> indptr(g.indptr.begin(), g.indptr.end());
  std::vector<std::int32_t> indices(g.indices.begin(), g.indices.end());
  auto stats = cost::measured_stats(g.rows, indptr.data(), indices.data(), mask);
  if (c.train > 0) stats.train = c.train;
  if (!ds.features().empty()) c.features = ds.features().cols;
  if (c.classes == 0) c.classes = ds.num_classes();
  return stats;
}

// A table without a row would read as "no traffic": every grid and rank
// count asked for is a layout no run can take.
void require_some_layout(const nlohmann::json& rows, const model_config& c) {
  BULKGNN_EXPECTS(!rows.empty(),
                  "--grid {} --ranks {} (--replication {}): no such layout; 2d and 2d-summa need "
                  "a square rank count, 1.5d a multiple of --replication, 3d --replication "
                  "times a square",
                  c.grid, c.ranks, c.replication);
}

// SAR's boundary under `method`'s partition into `parts`.
std::int64_t boundary_rows(csr_view graph, const std::string& method, int parts, int seed) {
  const auto partition = distributed::make_partition(method, graph, parts, seed);
  std::int64_t boundary = 0;
  for (int p = 0; p < parts; ++p) boundary += fullbatch::boundary_rows_of_part(graph, partition, p);
  return boundary;
}

// `bulkgnn model --mode full-batch`: each grid's closed forms per epoch
// (fullbatch/closed_forms.hpp) over the rank counts it can take.
void run_full_batch_model(model_config c) {
  const auto ranks = parse_int_list_in(c.ranks, "--ranks", 1, max_ranks);
  std::optional<data::dataset> ds;
  if (!c.data.empty()) {
    BULKGNN_EXPECTS(c.nodes == 0 && c.edges == 0,
                    "--nodes and --edges describe a graph without DATA; DATA {} has its own",
                    c.data);
    ds.emplace(data::dataset::open(c.data));
    c.nodes = ds->num_nodes();
    c.edges = ds->num_edges();
    if (!ds->features().empty()) c.features = ds->features().cols;
    if (c.classes == 0) c.classes = ds->num_classes();
  }
  BULKGNN_EXPECTS(c.nodes > 0, "model --mode full-batch: give DATA or --nodes");
  const trainer::model_config m{.kind = trainer::parse_layer_kind(c.model),
                                .in_features = c.features,
                                .hidden = c.hidden,
                                .num_classes = c.classes == 0 ? 2 : c.classes,
                                .layers = c.layers};
  const auto parameters =
      c.parameters > 0 ? c.parameters
                       : static_cast<std::int64_t>(trainer::gnn_model(m, 0).parameters().size());
  const auto grids = grids_of(c.grid, full_batch_grids, "full-batch training");
  fmt::print("full-batch {}: n {} features {} hidden {} classes {} layers {} parameters {}\n",
             c.model, c.nodes, c.features, c.hidden, m.num_classes, c.layers, parameters);
  fmt::print("{:<6} {:>6} {:>3} {:>14} {:>14} {:>14} {:>14} {:>14} {:>12}\n", "grid", "P", "c",
             "forward MB", "backward MB", "gradients MB", "total MB", "per rank MB",
             "comm s/epoch");
  nlohmann::json rows = nlohmann::json::array();
  for (const auto kind : grids) {
    const auto name = grid_kind_name(kind);
    if (kind == grid_kind::sar && !ds) {
      BULKGNN_EXPECTS(c.grid == "all",
                      "model --grid sar: SAR's bytes need DATA (the boundary "
                      "rows of its partition)");
      continue;
    }
    for (const auto p64 : ranks) {
      const int p = static_cast<int>(p64);
      const bool replicates = kind == grid_kind::one_and_half_d || kind == grid_kind::three_d;
      std::optional<fullbatch::grid_layout> layout;
      try {
        layout.emplace(kind, p, replicates ? c.replication : 1);
      } catch (const option_error&) {
        continue;  // this rank count cannot take the grid
      }
      const auto boundary =
          kind == grid_kind::sar ? boundary_rows(ds->graph(), c.partition, p, c.seed) : 0;
      const auto bytes =
          fullbatch::predicted_epoch_bytes(*layout, c.nodes, m, parameters, boundary);
      const double total = bytes.forward + bytes.backward + bytes.gradients;
      const double per_rank = total / p;
      fmt::print("{:<6} {:>6} {:>3} {:>14.4f} {:>14.4f} {:>14.4f} {:>14.4f} {:>14.4f} {:>12.4g}\n",
                 name, p, layout->replication(), bytes.forward / 1e6, bytes.backward / 1e6,
                 bytes.gradients / 1e6, total / 1e6, per_rank / 1e6,
                 per_rank / (c.bandwidth_gbs * 1e9));
      rows.push_back({{"grid", name},
                      {"ranks", p},
                      {"replication", layout->replication()},
                      {"boundary_rows", boundary},
                      {"forward_bytes_sent", bytes.forward},
                      {"backward_bytes_sent", bytes.backward},
                      {"gradients_bytes_sent", bytes.gradients},
                      {"seconds_per_epoch", per_rank / (c.bandwidth_gbs * 1e9)}});
    }
  }
  require_some_layout(rows, c);
  if (!c.metrics_out.empty())
    write_file_atomically(c.metrics_out, nlohmann::json{{"command", "model"},
                                                        {"mode", "full-batch"},
                                                        {"data", c.data},
                                                        {"nodes", c.nodes},
                                                        {"features", c.features},
                                                        {"hidden", c.hidden},
                                                        {"layers", c.layers},
                                                        {"model", c.model},
                                                        {"parameters", parameters},
                                                        {"predictions", rows}}
                                                 .dump(2) +
                                             "\n");
}

void run_model(model_config c) {
  if (c.mode == "full-batch") {
    require_writable_file(c.metrics_out, "--metrics-out");
    run_full_batch_model(std::move(c));
    return;
  }
  require_writable_file(c.metrics_out, "--metrics-out");
  const auto ranks = parse_int_list_in(c.ranks, "--ranks", 1, max_ranks);
  const auto fanouts = parse_fanouts(c.fanouts);
  const auto stats = stats_of(c);
  if (c.classes == 0) c.classes = 2;
  const cost::workload w{
      .sampler = cost_family_of(c.sampler),
      .batch_size = c.batch_size,
      .fanouts = fanouts,
      .bulk = c.bulk,
      .features = c.features,
      .hidden = c.hidden,
      .classes = c.classes,
      .parameters = c.parameters,
      .max_minibatches = c.max_minibatches,
      .weighted = c.weighted,
      .draw_at_owner = c.draw_at == "owner",
      .feature_cache_rows = static_cast<std::int64_t>(
          c.feature_cache_mib * 1024 * 1024 /
          (4 * static_cast<double>(std::max<std::int64_t>(c.features, 1)))),
      .root_weight = trainer::find_layer(sampler::find_sampler(c.sampler).layer, "--sampler")
                         .has_root_weight(),
      .fanout_per_destination =
          sampler::find_sampler(c.sampler).fanout == sampler::fanout_unit::per_destination};
  const cost::network net{.bandwidth = c.bandwidth_gbs * 1e9, .latency = c.latency_us * 1e-6};

  double m1 = 0, m2 = 0;
  for (const auto& g : stats.groups) {
    m1 += g.count * g.out_degree;
    m2 += g.count * g.out_degree * g.out_degree;
  }
  m1 /= static_cast<double>(stats.nodes);
  m2 /= static_cast<double>(stats.nodes);
  const auto mb = cost::expected_frontiers(stats, w, static_cast<double>(c.batch_size), 1);
  fmt::print("graph: n {} nnz {} train {}  E[d] {:.4g}  E[d²]/E[d] {:.4g}  ({})\n", stats.nodes,
             stats.edges, stats.train, m1, m1 > 0 ? m2 / m1 : 0.0,
             c.data.empty() ? "log-normal degree assumption" : "measured degree histogram");
  fmt::print(
      "workload: {} sampler, batch {} fanouts {} bulk {} features {} parameters {} "
      "minibatches/epoch {}; 1.5d/2d/3d draw at the {}; feature cache {} rows per rank\n",
      c.sampler, c.batch_size, c.fanouts, c.bulk, c.features, cost::model_parameters(w),
      cost::minibatches_per_epoch(stats, w), c.draw_at, w.feature_cache_rows);
  const auto memory = cost::training_memory_of(w, stats.nodes, false);
  fmt::print(
      "memory per training process, before the graph, features and buffers: model state "
      "{:.1f} MiB, one minibatch's activations up to {:.1f} MiB (at most {} vertices by hop)\n",
      memory.model / (1 << 20), memory.minibatch / (1 << 20),
      fmt::join(cost::minibatch_vertex_bound(w, stats.nodes), ","));
  fmt::print(
      "network: {} GB/s per rank, {} us per message; time = bytes / bandwidth + messages "
      "x latency, per rank, no overlap\n",
      c.bandwidth_gbs, c.latency_us);
  // Node-wise: the distinct vertices of each hop's frontier and the inputs;
  // layer-wise: the frontier rows each hop reads.
  std::vector<double> frontier_per_minibatch = mb.frontier;
  if (w.sampler == cost::sampler_family::node_wise) {
    fmt::print("expected distinct vertices per minibatch by hop:");
  } else {
    frontier_per_minibatch.clear();
    for (const auto& hop : cost::expected_layer_wise_hops(stats, w, 1, 1))
      frontier_per_minibatch.push_back(hop.frontier_rows);
    fmt::print("layer-wise sampler: features are not modelled (nan)\n");
    fmt::print("expected frontier rows per minibatch by hop:");
  }
  for (const double f : frontier_per_minibatch) fmt::print(" {:.0f}", f);
  fmt::print("\n\n{:<11} {:>6} {:>3} {:>14} {:>14} {:>14} {:>14} {:>14} {:>12}\n", "grid", "P", "c",
             "sampling MB", "features MB", "gradients MB", "total MB", "per rank MB",
             "comm s/epoch");

  nlohmann::json rows = nlohmann::json::array();
  for (const auto grid : grids_of(c.grid, minibatch_grids, "minibatch sampling"))
    for (const auto p64 : ranks) {
      const int p = static_cast<int>(p64);
      const int replication = grid == grid_kind::replicated || grid == grid_kind::two_d ||
                                      grid == grid_kind::two_d_summa
                                  ? 1
                                  : c.replication;
      const auto pred = cost::predict(stats, w, grid, p, replication, c.feature_replication);
      if (!pred.valid) continue;
      const double total = pred.sampling + pred.features + pred.gradients;
      fmt::print("{:<11} {:>6} {:>3} {:>14.4f} {:>14.4f} {:>14.4f} {:>14.4f} {:>14.4f} {:>12.4g}\n",
                 grid_kind_name(grid), p, replication, pred.sampling / 1e6, pred.features / 1e6,
                 pred.gradients / 1e6, total / 1e6, pred.per_rank(total) / 1e6,
                 pred.total_seconds(net));
      rows.push_back({{"grid", grid_kind_name(grid)},
                      {"ranks", p},
                      {"replication", replication},
                      {"feature_replication", c.feature_replication},
                      {"draw_at", c.draw_at},
                      {"sampling_bytes_sent", pred.sampling},
                      {"features_bytes_sent", pred.features},
                      {"gradients_bytes_sent", pred.gradients},
                      {"sampling_bytes_sent_per_rank", pred.per_rank(pred.sampling)},
                      {"features_bytes_sent_per_rank", pred.per_rank(pred.features)},
                      {"gradients_bytes_sent_per_rank", pred.per_rank(pred.gradients)},
                      {"feature_cache_rows", w.feature_cache_rows},
                      {"seconds_per_epoch",
                       {{"sampling", pred.seconds(pred.sampling, pred.sampling_messages, net)},
                        {"features", pred.seconds(pred.features, pred.features_messages, net)},
                        {"gradients", pred.seconds(pred.gradients, pred.gradients_messages, net)},
                        {"total", pred.total_seconds(net)}}},
                      {"messages_per_rank",
                       {{"sampling", pred.sampling_messages},
                        {"features", pred.features_messages},
                        {"gradients", pred.gradients_messages}}}});
    }
  require_some_layout(rows, c);
  if (!c.metrics_out.empty()) {
    const nlohmann::json out{
        {"command", "model"},
        {"data", c.data},
        {"nodes", stats.nodes},
        {"edges", stats.edges},
        {"train", stats.train},
        {"mean_degree", m1},
        {"second_moment", m2},
        {"batch_size", c.batch_size},
        {"fanouts", w.fanouts},
        {"bulk", c.bulk},
        {"features", c.features},
        {"parameters", cost::model_parameters(w)},
        {"sampler", c.sampler},
        {"minibatches", cost::minibatches_per_epoch(stats, w)},
        {"frontier_per_minibatch", frontier_per_minibatch},
        {"training_memory_bytes", {{"model", memory.model}, {"minibatch", memory.minibatch}}},
        {"network",
         {{"bandwidth_bytes_per_second", net.bandwidth}, {"latency_seconds", net.latency}}},
        {"predictions", rows}};
    write_file_atomically(c.metrics_out, out.dump(2) + "\n");
  }
}

}  // namespace

void add_model_command(CLI::App& app) {
  auto config = std::make_shared<model_config>();
  auto* cmd = app.add_subcommand(
      "model", "Predict per-epoch communication volume of sampling, features and gradients");
  cmd->add_option("DATA", config->data,
                  "dataset to measure n, nnz, the degree histogram and the training split from")
      ->check(non_empty_path());
  cmd->add_option("--split", config->split, "split whose training vertices are the seeds");
  cmd->add_option("--nodes", config->nodes, "vertices (without DATA)")
      ->check(integer_in(1, max_vertices));
  cmd->add_option("--edges", config->edges, "adjacency nonzeros (without DATA)")
      ->check(integer_in(0, max_edges));
  cmd->add_option("--degree-second-moment", config->second_moment,
                  "E[d²] for the log-normal degree assumption (default 2·E[d]²)")
      ->check(real_in({.low = 0, .high = 1e30, .low_open = true}));
  cmd->add_option("--train", config->train, "training vertices (default: the split, or n)")
      ->check(integer_in(1, max_vertices));
  cmd->add_option("--features", config->features, "feature width (default: DATA's, or 128)")
      ->check(integer_in(1, max_width));
  cmd->add_option("--classes", config->classes, "output classes (default: DATA's, or 2)")
      ->check(integer_in(1, max_classes));
  cmd->add_option("--hidden", config->hidden)
      ->capture_default_str()
      ->check(integer_in(1, max_width));
  cmd->add_option("--parameters", config->parameters,
                  "model parameters (default: GraphSAGE from the widths)")
      ->check(integer_in(1, max_edges));
  cmd->add_option("--batch-size", config->batch_size)
      ->capture_default_str()
      ->check(integer_in(1, max_vertices));
  cmd->add_option("--bulk", config->bulk, "minibatches per rank per sampling step")
      ->capture_default_str()
      ->check(integer_in(1, max_queue));
  cmd->add_option("--max-minibatches", config->max_minibatches, "per epoch (0 = all)")
      ->capture_default_str()
      ->check(integer_in(0, max_vertices));
  cmd->add_option("--fanouts", config->fanouts)->capture_default_str();
  cmd->add_option("--grid", config->grid,
                  fmt::format("all, {} (full-batch: all, {})", grid_kind_names(minibatch_grids),
                              grid_kind_names(full_batch_grids)))
      ->capture_default_str()
      ->check(one_of({"all", "replicated", "1d", "1.5d", "2d", "2d-summa", "3d", "sar"}));
  cmd->add_option("--replication", config->replication, "1.5d copies / 3d layers")
      ->capture_default_str()
      ->check(integer_in(1, max_ranks));
  cmd->add_option("--feature-replication", config->feature_replication)
      ->capture_default_str()
      ->check(integer_in(1, max_ranks));
  cmd->add_option("--ranks", config->ranks, "rank counts to predict")->capture_default_str();
  cmd->add_flag("--weighted", config->weighted,
                "sharded rows carry edge values (1.5d, 2d, 2d-summa, 3d)");
  cmd->add_option("--feature-cache", config->feature_cache_mib,
                  "MiB per rank of cached remote feature rows (train --feature-cache)")
      ->capture_default_str()
      ->check(real_in({.low = 0, .high = 1e9}));
  cmd->add_option("--bandwidth", config->bandwidth_gbs, "network GB/s per rank, for the time")
      ->capture_default_str()
      ->check(real_in({.low = 1e-6, .high = 1e6}));
  cmd->add_option("--latency", config->latency_us, "microseconds per message, for the time")
      ->capture_default_str()
      ->check(real_in({.low = 0, .high = 1e6}));
  cmd->add_option("--draw-at", config->draw_at,
                  "1.5d, 2d and 3d node-wise draws: at the rows' owner or at the requester")
      ->capture_default_str()
      ->check(one_of({"owner", "requester"}));
  cmd->add_option("--sampler", config->sampler,
                  fmt::format("{} (layer-wise ones: sampling and gradients only, features not "
                              "modelled)",
                              fmt::join(modelled_samplers(), ", ")))
      ->capture_default_str()
      ->check(one_of(modelled_samplers()));
  cmd->add_option("--mode", config->mode,
                  fmt::format("minibatch (sampling, features, gradients) or full-batch (the "
                              "closed forms of --grid {}; sar needs DATA)",
                              grid_kind_names(full_batch_grids)))
      ->capture_default_str()
      ->check(one_of({"minibatch", "full-batch"}));
  cmd->add_option("--model", config->model, "full-batch layers: " + layers_help())
      ->capture_default_str()
      ->check(one_of(layer_choices()));
  cmd->add_option("--layers", config->layers, "full-batch layers")
      ->capture_default_str()
      ->check(integer_in(1, max_layers));
  cmd->add_option("--partition", config->partition, "full-batch sar: block or metis parts")
      ->capture_default_str()
      ->check(one_of({"block", "metis"}));
  cmd->add_option("--seed", config->seed, "full-batch sar: the METIS seed (train's --seed)")
      ->capture_default_str()
      ->check(integer_in(0, max_seed));
  cmd->add_option("--metrics-out", config->metrics_out, "write the predictions as JSON")
      ->check(non_empty_path());
  cmd->callback([config] { run_model(*config); });
}

}  // namespace bulkgnn::tools
