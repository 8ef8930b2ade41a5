#include "full_batch_train.hpp"

#include "commands.hpp"

#include "bulkgnn/core/atomic_file.hpp"
#include "bulkgnn/core/error.hpp"
#include "bulkgnn/core/parallel.hpp"
#include "bulkgnn/core/timer.hpp"
#include "bulkgnn/fullbatch/full_batch_training.hpp"
#include "bulkgnn/session/execution.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <cstdio>
#include <string_view>

namespace bulkgnn::tools {

namespace {

fullbatch::full_batch_options options_from(const full_batch_config& c) {
  fullbatch::full_batch_options o;
  o.model = {.kind = trainer::parse_layer_kind(c.model),
             .hidden = c.hidden,
             .layers = c.layers,
             .dropout = c.dropout,
             .gemm = c.gemm.empty() ? std::nullopt
                                    : std::optional(kernels::parse_gemm_mode(c.gemm, "--gemm"))};
  o.optimizer = {.lr = c.lr, .weight_decay = c.weight_decay};
  o.normalize_features = loader::parse_feature_normalization(c.normalize_features);
  o.epochs = c.epochs;
  o.eval_every = c.eval_every;
  o.seed = c.seed;
  o.split = c.split;
  o.grid = parse_grid_kind(c.grid, full_batch_grids, "full-batch training");
  o.replication = c.replication;
  o.partition = c.partition;
  o.compression = fullbatch::compression_schedule(c.compress);
  o.exec = session::single_executor(c.backend);
  return o;
}

double megabytes(double bytes) { return bytes / 1e6; }

// measured / predicted − 1, as a signed percentage ("n/a" without a prediction).
std::string deviation(double measured, double predicted) {
  if (predicted <= 0) return measured == 0 ? "exact" : "n/a";
  return fmt::format("{:+.1f}%", 100.0 * (measured / predicted - 1.0));
}

void print_epoch(const fullbatch::full_batch_epoch& e, std::int64_t epochs, double eta_seconds) {
  fmt::print(
      "epoch {:>4}/{}  loss {:.4f}  train {:.4f}  valid {}  test {}  {:.3f} s  rate {}  MB sent: "
      "forward {:.2f} backward {:.2f} gradients {:.2f}  ETA {:.0f} s\n",
      e.epoch + 1, epochs, e.loss, e.train_acc, accuracy_text(e.valid_acc),
      accuracy_text(e.test_acc), e.seconds, e.compression_rate,
      megabytes(static_cast<double>(e.traffic.at("forward"))),
      megabytes(static_cast<double>(e.traffic.at("backward"))),
      megabytes(static_cast<double>(e.traffic.at("gradients"))), eta_seconds);
  std::fflush(stdout);
}

// The last epoch's bytes per stage (every epoch's are equal at a fixed rate)
// next to the closed forms.
void print_summary(const fullbatch::full_batch_result& result, std::int64_t ranks,
                   double wall_seconds) {
  double train_seconds = 0, bytes_sent = 0;
  for (const auto& e : result.epochs) {
    train_seconds += e.seconds;
    for (const auto& [stage, bytes] : e.traffic) bytes_sent += static_cast<double>(bytes);
  }
  const auto epochs = static_cast<double>(result.epochs.size());
  fmt::print("trained {} epochs in {:.1f} s ({:.3f} s/epoch); {:.1f} s in all\n",
             result.epochs.size(), train_seconds, train_seconds / epochs, wall_seconds);
  if (ranks > 1) {
    const auto& last = result.epochs.back().traffic;
    const auto& p = result.predicted;
    fmt::print("bytes sent over {} ranks in the last epoch (closed form; measured vs it):\n",
               ranks);
    for (const auto& [stage, predicted] :
         {std::pair{"forward", p.forward}, std::pair{"backward", p.backward},
          std::pair{"gradients", p.gradients}}) {
      const auto measured = static_cast<double>(last.at(stage));
      const bool compressed =
          result.epochs.back().compression_rate > 1 && std::string_view(stage) != "gradients";
      fmt::print("  {:<9} {:>12.3f} MB  ({:.3f} MB; {})\n", stage, megabytes(measured),
                 megabytes(predicted),
                 compressed ? "compressed: the closed form counts floats"
                            : deviation(measured, predicted));
    }
    fmt::print("  setup     {:>12.3f} MB  (degrees and tiles, once); all epochs {:.3f} MB\n",
               megabytes(static_cast<double>(result.setup_traffic.at("setup"))),
               megabytes(bytes_sent));
  }
  const auto& last = result.epochs.back();
  fmt::print(
      "peak resident set of the largest rank {:.1f} MiB, of which the grid held {:.1f} MiB "
      "at once for one product\n",
      static_cast<double>(last.peak_resident_bytes) / (1 << 20),
      static_cast<double>(last.aggregation_peak_bytes) / (1 << 20));
  if (result.best_epoch)
    fmt::print("best valid accuracy {:.4f} at epoch {}; test accuracy there {:.4f}\n",
               result.best_valid_acc, *result.best_epoch + 1, result.test_acc_at_best);
}

nlohmann::json metrics_json(const full_batch_config& c, const fullbatch::full_batch_result& result,
                            int ranks, double total_seconds) {
  nlohmann::json epochs = nlohmann::json::array();
  for (const auto& e : result.epochs) epochs.push_back(e.to_json());
  const auto final_record =
      final_accuracy_json(result.best_epoch, result.best_valid_acc, result.test_acc_at_best);
  return {{"command", "train"},
          {"config",
           {{"mode", "full-batch"},
            {"data", c.data.empty() ? "embedded-csbm" : c.data},
            {"split", c.split},
            {"model", c.model},
            {"layers", c.layers},
            {"hidden", c.hidden},
            {"dropout", c.dropout},
            {"gemm", c.gemm.empty() ? "default" : c.gemm},
            {"lr", c.lr},
            {"weight_decay", c.weight_decay},
            {"normalize_features", c.normalize_features},
            {"epochs", c.epochs},
            {"eval_every", c.eval_every},
            {"seed", c.seed},
            {"threads", c.threads},
            {"backend", c.backend},
            {"ranks", ranks},
            {"grid", c.grid},
            {"replication", c.replication},
            {"partition", c.partition},
            {"compress", c.compress}}},
          {"epochs", epochs},
          {"final", final_record},
          {"parameters", result.parameter_count},
          {"boundary_rows", result.boundary_rows},
          {"setup_traffic_bytes", result.setup_traffic.at("setup")},
          {"predicted_epoch_bytes",
           {{"forward", result.predicted.forward},
            {"backward", result.predicted.backward},
            {"gradients", result.predicted.gradients}}},
          {"total_seconds", total_seconds}};
}

}  // namespace

void run_full_batch_train(const full_batch_config& c) {
  auto options = options_from(c);
  const bool rank_zero = session::world_rank() == 0;
  // Every rank checks the path it was given (rank 0 writes the metrics).
  require_writable_file(c.metrics_out, "--metrics-out");
  BULKGNN_EXPECTS(c.data.empty() || !data::is_partitioned_dataset(c.data),
                  "DATA {}: full-batch training reads a whole dataset and partitions it itself; "
                  "this one is partitioned (bulkgnn partition): give the dataset it was made from",
                  c.data);
  const thread_limit limit(c.threads);
  const stopwatch total;
  const bool quiet = c.quiet || !rank_zero;
  const auto ds = open_dataset_or_default(c.data, quiet);
  const auto data = trainer::whole_dataset(ds);
  comm::traffic_log log;
  const auto world = session::agreed_world(ds, c.shared, log);
  fullbatch::validate(options, world->size());
  if (rank_zero)
    fmt::print(
        "{}: {} vertices, {} edges, {} features, {} classes; full-batch {} ({} layers), "
        "grid {}{} over {} rank(s), compression {}\n",
        data.name, data.num_nodes, data.num_edges, data.feature_dim, data.num_classes, c.model,
        c.layers, c.grid, c.replication > 1 ? fmt::format(" c={}", c.replication) : std::string(),
        world->size(), c.compress);
  // Rewritten after every epoch, so that an interrupted run keeps its epochs.
  const auto write_metrics = [&](const fullbatch::full_batch_result& so_far) {
    if (rank_zero && !c.metrics_out.empty())
      write_file_atomically(c.metrics_out,
                            metrics_json(c, so_far, world->size(), total.seconds()).dump(2) + "\n");
  };
  const stopwatch training;
  const auto result = fullbatch::train_full_batch(
      data, options, *world,
      [&](const fullbatch::full_batch_epoch& e, const fullbatch::full_batch_result& so_far) {
        write_metrics(so_far);
        if (quiet) return;
        const double per_epoch = training.seconds() / static_cast<double>(e.epoch + 1);
        print_epoch(e, c.epochs, per_epoch * static_cast<double>(c.epochs - e.epoch - 1));
      });
  write_metrics(result);
  if (!rank_zero) return;
  print_summary(result, world->size(), total.seconds());
}

}  // namespace bulkgnn::tools
