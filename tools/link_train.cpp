#include "link_train.hpp"

#include "commands.hpp"
#include "train_memory.hpp"

#include "bulkgnn/core/atomic_file.hpp"
#include "bulkgnn/core/error.hpp"
#include "bulkgnn/core/parallel.hpp"
#include "bulkgnn/core/timer.hpp"
#include "bulkgnn/sampler/sampler_table.hpp"
#include "bulkgnn/session/session.hpp"
#include "bulkgnn/session/training.hpp"

#include <fmt/format.h>

#include <cstdio>
#include <optional>

namespace bulkgnn::tools {

namespace {

void print_link_epoch(const trainer::epoch_record& r, std::int64_t epochs) {
  fmt::print(
      "epoch {:>3}/{}  loss {:.4f}  train {:.4f}  valid hits@{} {}  mrr {}  test hits@{} "
      "{}  mrr {}  {:.2f} s",
      r.epoch + 1, epochs, r.loss, r.train_acc, r.hits_k.value_or(0), accuracy_text(r.valid_acc),
      accuracy_text(r.valid_mrr), r.hits_k.value_or(0), accuracy_text(r.test_acc),
      accuracy_text(r.test_mrr), r.seconds);
  if (r.valid_acc) fmt::print(" (+{:.2f} s eval)", r.eval_seconds);
  print_pipeline_stages(r.pipeline);
  fmt::print("  peak RSS {:.0f} MiB\n", static_cast<double>(r.peak_resident_bytes) / (1 << 20));
  std::fflush(stdout);
}

// The best validation epoch's Hits@K and MRRs, and which of the two picked
// it; nulls when no epoch was evaluated.
nlohmann::json final_link_json(const trainer::train_result& result, std::int64_t k, bool by_mrr) {
  const auto hits_valid = fmt::format("valid_hits@{}", k);
  const auto hits_test = fmt::format("test_hits@{}", k);
  if (!result.best_epoch)
    return {{"best_epoch", nullptr}, {"selected_by", by_mrr ? "mrr" : "hits"},
            {hits_valid, nullptr},   {hits_test, nullptr},
            {"valid_mrr", nullptr},  {"test_mrr", nullptr}};
  const auto& best = result.epochs[static_cast<std::size_t>(*result.best_epoch)];
  const auto value = [](const std::optional<double>& v) {
    return v ? nlohmann::json(*v) : nlohmann::json(nullptr);
  };
  return {{"best_epoch", *result.best_epoch + 1}, {"selected_by", by_mrr ? "mrr" : "hits"},
          {hits_valid, value(best.valid_acc)},    {hits_test, value(best.test_acc)},
          {"valid_mrr", value(best.valid_mrr)},   {"test_mrr", value(best.test_mrr)}};
}

nlohmann::json link_metrics_json(const link_train_config& c,
                                 const session::link_training_plan& plan,
                                 const trainer::train_result& result, double total_seconds) {
  nlohmann::json epochs = nlohmann::json::array();
  for (const auto& r : result.epochs) epochs.push_back(r.to_json());
  nlohmann::json config = result.config;
  config.update(c.settings);
  return {{"command", "train"},
          {"config", config},
          {"epochs", epochs},
          {"final", final_link_json(result, plan.scoring.hits_k, plan.scoring.select_by_mrr)},
          {"total_seconds", total_seconds}};
}

}  // namespace

void run_link_train(const link_train_config& c) {
  auto options = c.options;
  trainer::validate(options);
  trainer::validate(c.plan.scoring);
  const bool rank_zero = session::world_rank() == 0;
  BULKGNN_EXPECTS(session::world_size() == 1 || c.distribution.grid == "replicated",
                  "--grid {}: --task link over MPI ranks holds the whole graph and features on "
                  "every rank (--grid replicated, the default)",
                  c.distribution.grid);
  require_writable_file(c.metrics_out, "--metrics-out");
  if (rank_zero) {
    require_writable_directory(options.checkpoint_dir.string(), "--checkpoint-dir");
    require_output_apart_from_input(options.checkpoint_dir.string(), "--checkpoint-dir", c.data,
                                    "DATA");
  }
  const thread_limit limit(c.threads);
  const stopwatch total;
  options.quiet = options.quiet || !rank_zero;
  const auto data = open_run_data(c.data, c.distribution, true, options.quiet);
  BULKGNN_EXPECTS(data.whole.has_value(),
                  "--task link: {} is a partitioned dataset; link prediction reads a whole one",
                  c.data);
  const auto ds = trainer::whole_dataset(*data.whole);
  // Refused before the split, which takes a while on a large graph.
  BULKGNN_EXPECTS(ds.feature_dim > 0 || options.node_embedding > 0,
                  "{}: the dataset has no node features; learn an input embedding per vertex "
                  "instead (--node-embedding 64, say)",
                  ds.name);
  BULKGNN_EXPECTS(ds.feature_dim == 0 || options.node_embedding == 0,
                  "--node-embedding: {} has {} node features, which the model reads; learned "
                  "embeddings replace features only on a dataset without them",
                  ds.name, ds.feature_dim);
  if (options.node_embedding > 0)
    require_memory_for_embedding(ds, options.node_embedding, trainer::model_executor(options));
  std::optional<session::run_session> session_holder;
  start_session(session_holder, data, c.distribution, false, c.shared);
  session::training_ranks ranks(*session_holder, trainer::model_executor(options));
  options.parallel = ranks.parallel();
  const auto split = c.split_dir.empty() ? data::random_link_split(ds.graph, c.split)
                                         : data::read_link_split(c.split_dir, ds.graph);
  // Drawn tails serve only a set without targets of its own.
  const bool draws_tails = (split.valid_negative_targets.empty() && split.valid.size() > 0) ||
                           (split.test_negative_targets.empty() && split.test.size() > 0);
  BULKGNN_EXPECTS(draws_tails || !c.ranking_negatives_given,
                  "--ranking-negatives: the link split {} brings each held-out positive's own "
                  "negative targets for valid and test, which MRR ranks against; leave it out",
                  c.split_dir);
  auto plan = c.plan;
  plan.scoring.select_by_mrr =
      c.select_by == "mrr" || (c.select_by == "auto" && !split.valid_negative_targets.empty());
  if (rank_zero) {
    fmt::print(
        "{}: {} vertices, {} edges, {}; link prediction, {} head, {} sampler, "
        "fanouts {}{}\n",
        ds.name, ds.num_nodes, ds.num_edges,
        model_inputs_text(ds.feature_dim, options.node_embedding),
        trainer::link_head_name(c.plan.scoring.head),
        sampler::find_sampler(options.sampling.kind).name, fmt::join(options.sampling.fanouts, ","),
        session::world_size() > 1
            ? fmt::format("; {} ranks, each its slice of every minibatch", session::world_size())
            : std::string());
    const auto made = c.split_dir.empty()
                          ? fmt::format(
                                "random link split (seed {}, as PyG's RandomLinkSplit; "
                                "--link-split-dir reads a stored one)",
                                c.split.seed)
                          : fmt::format("link split {}", c.split_dir);
    const auto targets = [](const data::negative_targets& t) {
      return t.empty() ? std::string()
                       : fmt::format(" ({} own negative targets per positive)", t.per_positive);
    };
    fmt::print(
        "{}: {} train, {} valid, {} test {}edges; messages pass over the train edges (and the "
        "valid ones for test); {} fixed negatives for valid{}, {} for test{}\n",
        made, split.train.size(), split.valid.size(), split.test.size(),
        split.undirected ? "undirected " : "", split.valid_negatives.size(),
        targets(split.valid_negative_targets), split.test_negatives.size(),
        targets(split.test_negative_targets));
    if (split.valid_in_training > 0 || split.test_in_training_or_valid > 0)
      fmt::print(
          "note: {} valid edges are also training edges and {} test edges also training or "
          "valid ones; messages pass over them (OGB's ogbl-collab repeats pairs across years)\n",
          split.valid_in_training, split.test_in_training_or_valid);
    fmt::print("the best epoch is the one of the best valid {}{}\n",
               plan.scoring.select_by_mrr ? "MRR" : fmt::format("Hits@{}", plan.scoring.hits_k),
               c.select_by != "auto" ? std::string(" (--select-by)")
               : plan.scoring.select_by_mrr
                   ? std::string(" (the split's own negative targets: ogbl-citation2's protocol; "
                                 "--select-by hits to change)")
                   : std::string());
    std::fflush(stdout);
  }
  const auto write_metrics = [&](const trainer::train_result& so_far) {
    if (!c.metrics_out.empty() && rank_zero)
      write_file_atomically(c.metrics_out,
                            link_metrics_json(c, plan, so_far, total.seconds()).dump(2) + "\n");
  };
  const auto result = session::train_links(
      ds, split, options, plan,
      [&](const trainer::epoch_record& r, const trainer::train_result& so_far) {
        if (rank_zero) print_link_epoch(r, options.epochs);
        write_metrics(so_far);
      });
  write_metrics(result);
  if (!rank_zero) return;
  double train_seconds = 0;
  for (const auto& r : result.epochs) train_seconds += r.seconds;
  fmt::print("trained {} epochs in {:.1f} s; this run: {} epochs, {:.1f} s\n", result.epochs.size(),
             train_seconds, result.epochs_this_run, total.seconds());
  if (result.best_epoch) {
    const auto& best = result.epochs[static_cast<std::size_t>(*result.best_epoch)];
    fmt::print("best valid {} {:.4f} at epoch {}; there test hits@{} {}, test mrr {}\n",
               plan.scoring.select_by_mrr ? std::string("mrr")
                                          : fmt::format("hits@{}", plan.scoring.hits_k),
               result.best_valid_acc, *result.best_epoch + 1, plan.scoring.hits_k,
               accuracy_text(best.test_acc), accuracy_text(best.test_mrr));
  }
}

}  // namespace bulkgnn::tools
