#include "bulkgnn/trainer/link_training.hpp"

#include "bulkgnn/core/error.hpp"
#include "bulkgnn/core/progress.hpp"
#include "bulkgnn/core/timer.hpp"
#include "bulkgnn/kernels/elementwise.hpp"
#include "bulkgnn/kernels/loss.hpp"
#include "bulkgnn/trainer/layers.hpp"
#include "bulkgnn/trainer/link_metrics.hpp"
#include "bulkgnn/trainer/placement.hpp"
#include "run_checkpointer.hpp"
#include "run_support.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <optional>
#include <ranges>
#include <vector>

namespace bulkgnn::trainer {

namespace {

using detail::epoch_measurement;

// The epoch field of the ranking negatives' keys, apart from training's
// epochs (below 2^30) and evaluation's bases.
constexpr std::uint32_t ranking_stream = 0xBFFFFFFFu;
// Pairs scored at once in evaluation: bounds the head's buffers whatever
// the held-out sets' size.
constexpr std::int64_t scoring_chunk = 65536;

// A minibatch's supervision as pairs of local ids with labels: binary, as
// the loader lays them out; triplet, the positives (1) and then each one's
// corrupted tails (0).
struct labelled_pairs {
  std::vector<vertex_t> source;
  std::vector<vertex_t> target;
  std::vector<float> label;
};

labelled_pairs pairs_of(const sampler::link_seeds& seeds) {
  labelled_pairs pairs{seeds.label_source, seeds.label_target, {}};
  if (seeds.negative_target.empty()) {
    pairs.label = seeds.edge_label;
    return pairs;
  }
  pairs.label.assign(pairs.source.size(), 1.0f);
  const auto per_positive = seeds.negative_target.size() / seeds.label_source.size();
  for (std::size_t i = 0; i < seeds.negative_target.size(); ++i) {
    pairs.source.push_back(seeds.label_source[i / per_positive]);
    pairs.target.push_back(seeds.negative_target[i]);
    pairs.label.push_back(0.0f);
  }
  return pairs;
}

// The scores of pairs of rows of z, on the host: target i against source
// i / per (per = 1: pairs given one by one; per = K: each source's K ranking
// targets), in chunks whose sources are built as they are scored, so that
// the ranking pairs are never copied (ogbl-citation2's 1000 targets per
// positive make them a gigabyte).
std::vector<float> scores_of(link_head& head, dense_view<const float> z,
                             std::span<const vertex_t> sources, std::span<const vertex_t> targets,
                             std::size_t per = 1) {
  std::vector<float> scores(targets.size());
  std::vector<vertex_t> chunk_sources;
  for (std::size_t first = 0; first < targets.size(); first += scoring_chunk) {
    const auto size = std::min(static_cast<std::size_t>(scoring_chunk), targets.size() - first);
    chunk_sources.resize(size);
    for (std::size_t i = 0; i < size; ++i) chunk_sources[i] = sources[(first + i) / per];
    const auto chunk = head.forward(z, {chunk_sources, targets.subspan(first, size)});
    head.exec().memory().copy(scores.data() + first, chunk.data(), chunk.size_bytes());
  }
  return scores;
}

// Hits@K and MRR of one held-out set after an epoch: the embeddings of
// every vertex over the set's graph, its positives against its pool of
// negatives (Hits@K) and against their own corrupted tails (MRR).
class held_out_links {
 public:
  held_out_links(const link_evaluation_set& set, csr_view whole_graph,
                 const link_train_options& link, std::uint32_t seed, std::uint32_t part)
      : set_(set),
        whole_graph_(whole_graph),
        ranking_negatives_(link.ranking_negatives),
        seed_(seed),
        part_(part) {}

  // Each positive's corrupted tails, from streams keyed on (seed, part,
  // positive, tail): the same every epoch; none where the set brings its own
  // negative targets. option_error naming link_train_options.ranking_negatives
  // where the graph is too dense.
  void draw_ranking_tails() {
    if (!drawn_tails_.empty() || set_.positives.source.empty() || !set_.negative_targets.empty())
      return;
    draw_tails();
  }

  // Sets hits and mrr (nullopt for a set without positives).
  void evaluate(const gnn_model& model, link_head& head, dense_view<const float> features,
                std::int64_t k, std::optional<double>& hits, std::optional<double>& mrr) {
    if (set_.positives.source.empty()) return;
    draw_ranking_tails();
    if (!block_) block_ = full_graph_block(model.exec(), set_.graph, model.config().kind);
    const auto z = predict_full_graph(model, *block_, features);
    const auto positive = scores_of(head, z.view(), set_.positives.source, set_.positives.target);
    const auto negative = scores_of(head, z.view(), set_.negatives.source, set_.negatives.target);
    const bool own = !set_.negative_targets.empty();
    const auto ranking =
        scores_of(head, z.view(), set_.positives.source,
                  own ? set_.negative_targets : std::span<const vertex_t>(drawn_tails_),
                  static_cast<std::size_t>(own ? set_.targets_per_positive : ranking_negatives_));
    for (const auto* scores : {&positive, &negative, &ranking})
      if (!std::ranges::all_of(*scores, [](float s) { return std::isfinite(s); }))
        throw error(
            "train_links: the model scores a held-out pair as not finite (diverged; lower "
            "adam_options.lr)");
    hits = set_.negatives.source.empty() ? hits_at_k_of_own_negatives(positive, ranking, k)
                                         : hits_at_k(positive, negative, k);
    mrr = mean_reciprocal_rank(positive, ranking);
  }

 private:
  void draw_tails() {
    const sampler::negative_sampler tails(whole_graph_,
                                          {.mode = sampler::negative_mode::triplet,
                                           .amount = static_cast<double>(ranking_negatives_),
                                           .strict = true});
    const auto positives = set_.positives.source.size();
    drawn_tails_.reserve(positives * static_cast<std::size_t>(ranking_negatives_));
    for (std::size_t i = 0; i < positives; ++i)
      for (std::int64_t k = 0; k < ranking_negatives_; ++k) {
        const auto key = rng_key{seed_, ranking_stream, part_, static_cast<std::uint32_t>(i),
                                 static_cast<std::uint32_t>(k)};
        const auto source = set_.positives.source[i];
        vertex_t target = 0;
        try {
          target = tails.draw(key, source).second;
        } catch (const option_error&) {
          throw option_error(fmt::format(
              "link_train_options.ranking_negatives: held-out source {} has too few "
              "non-neighbours to draw corrupted tails from ({} draws each); the graph is too "
              "dense around it for MRR",
              source, sampler::strict_attempts));
        }
        drawn_tails_.push_back(target);
      }
  }

  const link_evaluation_set& set_;
  csr_view whole_graph_;
  std::int64_t ranking_negatives_;
  std::uint32_t seed_;
  std::uint32_t part_;
  std::vector<vertex_t> drawn_tails_;       // ranking_negatives_ per positive, positive by positive
  std::optional<aggregation_block> block_;  // the set's graph, built at the first evaluation
};

void check_evaluation_set(const link_evaluation_set& set, std::int64_t num_nodes,
                          const char* name) {
  BULKGNN_EXPECTS(
      set.negative_targets.empty() ||
          (set.targets_per_positive >= 1 &&
           set.negative_targets.size() ==
               set.positives.source.size() * static_cast<std::size_t>(set.targets_per_positive)),
      "train_links: the {} set's {} negative targets are not {} for each of its {} "
      "positives",
      name, set.negative_targets.size(), set.targets_per_positive, set.positives.source.size());
  for (const vertex_t t : set.negative_targets)
    BULKGNN_EXPECTS(t >= 0 && t < num_nodes,
                    "train_links: the {} set's negative target {} is outside [0, {})", name, t,
                    num_nodes);
  BULKGNN_EXPECTS(set.graph.rows == num_nodes && set.graph.cols == num_nodes,
                  "train_links: the {} graph is {}x{}, the dataset has {} vertices", name,
                  set.graph.rows, set.graph.cols, num_nodes);
  if (!set.positives.source.empty()) sampler::validate(set.positives, num_nodes);
  if (!set.negatives.source.empty()) sampler::validate(set.negatives, num_nodes);
}

class link_run {
 public:
  link_run(const training_data& ds, const train_options& o, const link_train_options& link,
           const link_sources& sources)
      : ds_(ds),
        options_(o),
        link_(link),
        sources_(sources),
        config_(detail::model_of(ds, o, o.model.hidden)),
        own_normalizer_(sources.normalizer != nullptr ? std::nullopt : feature_normalizer(ds, o)),
        valid_(sources.valid, ds.graph, link, o.sampling.seed, 0),
        test_(sources.test, ds.graph, link, o.sampling.seed, 1),
        state_(config_, o) {
    // Drawn before the first epoch, so that a graph too dense for them fails
    // before any training.
    if (o.eval_every > 0) {
      valid_.draw_ranking_tails();
      test_.draw_ranking_tails();
    }
    state_.add_link_head(link.head, o);
    auto& fingerprint = state_.result.config = detail::fingerprint_of(ds, o, config_, "link");
    fingerprint["task"] = "link";
    fingerprint["link_head"] = link_head_name(link.head);
    fingerprint["hits_k"] = link.hits_k;
    fingerprint["ranking_negatives"] = link.ranking_negatives;
    fingerprint["link_sources"] = link.source_settings;
    // Only where it is set, so that earlier checkpoints still resume.
    if (link.select_by_mrr) fingerprint["select_by"] = "mrr";
  }

  train_result execute(const epoch_callback& on_epoch) {
    detail::run_with_checkpoints(
        state_, options_,
        [&](std::int64_t epoch) { return train_epoch(static_cast<std::uint32_t>(epoch)); },
        [&](epoch_record& record) { evaluate(record); }, on_epoch);
    return std::move(state_.result);
  }

 private:
  const loader::row_normalizer* normalizer() const {
    if (sources_.normalizer != nullptr) return sources_.normalizer;
    return own_normalizer_ ? &*own_normalizer_ : nullptr;
  }

  epoch_record train_epoch(std::uint32_t epoch) {
    const epoch_measurement measurement(state_.model, sources_.sampler);
    auto& stream = sources_.train;
    stream.start_epoch({}, epoch);
    matrix grad(0, 0, state_.model.exec().memory());
    auto r = detail::train_minibatches(
        stream, state_, options_, epoch,
        [&](const loader::ready_minibatch& mb) -> std::optional<detail::step_result> {
          BULKGNN_EXPECTS(mb.link.has_value(),
                          "train_links: minibatch {} carries no link supervision (the train "
                          "source must be a link loader)",
                          mb.batch.index);
          if (mb.link->pairs() == 0) return std::nullopt;
          return train_step(mb, epoch, grad);
        });
    r.hits_k = link_.hits_k;
    r.selects_by_mrr = link_.select_by_mrr;
    measurement.fill(r, stream);
    return r;
  }

  // A data-parallel slice's share of its minibatch's pairs (1 alone), by
  // which its loss and gradients are weighted, so that the ranks' sum is the
  // whole minibatch's mean.
  static double share_of(const sampler::link_seeds& link) {
    const auto whole = link.minibatch_pairs > 0 ? link.minibatch_pairs : link.pairs();
    return static_cast<double>(link.pairs()) / static_cast<double>(whole);
  }

  // Forward, loss and backward of one (slice of a) minibatch with pairs to
  // score; the gradients are left for the optimiser step.
  detail::step_result train_step(const loader::ready_minibatch& mb, std::uint32_t epoch,
                                 matrix& grad) {
    const executor& exec = state_.model.exec();
    const detail::placed_minibatch on_model(exec, mb, config_.kind, true);
    const kernels::dropout_key dropout{options_.sampling.seed, epoch,
                                       static_cast<std::uint32_t>(mb.batch.index),
                                       on_model.row_ids.span()};
    const auto z = detail::forward_placed(state_.model, on_model, dropout);
    const auto pairs = pairs_of(*mb.link);
    const auto scores = state_.head->forward(z, {pairs.source, pairs.target});
    const placed<float> labels(exec, pairs.label, memory_space::host);
    grad.reshape(static_cast<std::int64_t>(scores.size()), 1);
    const auto loss = kernels::binary_cross_entropy(exec, scores, labels.span(), grad.data());
    if (!std::isfinite(loss.loss))
      throw error(
          fmt::format("epoch {}, minibatch {}: the loss is {} (diverged; lower adam_options.lr)",
                      epoch, mb.batch.index, loss.loss));
    const double share = share_of(*mb.link);
    if (share != 1.0) kernels::scale(exec, grad.data(), static_cast<float>(share));
    state_.model.backward(state_.head->backward(grad.data()));
    return {loss, share};
  }

  void evaluate(epoch_record& r) {
    const stopwatch watch;
    const auto& model = state_.model;
    const dense_view<const float> features =
        model.config().embedding_rows > 0
            ? model.embedding()
            : features_.view(model.exec(), ds_.features, normalizer());
    auto& head = *state_.head;
    valid_.evaluate(model, head, features, link_.hits_k, r.valid_acc, r.valid_mrr);
    test_.evaluate(model, head, features, link_.hits_k, r.test_acc, r.test_mrr);
    features_.release_host_copy();
    r.eval_seconds = watch.seconds();
  }

  const training_data& ds_;
  const train_options& options_;
  const link_train_options& link_;
  const link_sources& sources_;
  model_config config_;
  std::optional<loader::row_normalizer> own_normalizer_;
  detail::evaluation_features features_;
  held_out_links valid_;
  held_out_links test_;
  detail::training_state state_;
};

}  // namespace

void validate(const link_train_options& o) {
  BULKGNN_EXPECTS(o.hits_k >= 1, "link_train_options.hits_k must be at least 1, got {}", o.hits_k);
  BULKGNN_EXPECTS(o.ranking_negatives >= 1 && o.ranking_negatives <= 100000,
                  "link_train_options.ranking_negatives must be in [1, 100000], got {}",
                  o.ranking_negatives);
}

train_result train_links(const training_data& ds, const train_options& options,
                         const link_train_options& link, const link_sources& sources,
                         const epoch_callback& on_epoch) {
  validate(options);
  validate(link);
  // The sampler leaves a minibatch's own edges out of its blocks with a host
  // kernel (drop_excluded_edges).
  BULKGNN_EXPECTS(options.exec.kind() != backend::cuda,
                  "train_options.exec: link prediction samples on the host back ends (cpu, "
                  "reference) so far, not on a GPU; the model may train on one");
  BULKGNN_EXPECTS(options.parallel == nullptr || options.parallel->ranks != nullptr,
                  "trainer::train_links: parallel.ranks must be set for a data-parallel run");
  BULKGNN_EXPECTS(ds.whole,
                  "train_links: link prediction needs the whole dataset (not a part of a "
                  "partitioned one)");
  BULKGNN_EXPECTS(options.eval == evaluation::full,
                  "train_options.eval: link prediction evaluates over the full graph only");
  // OGB counts every positive a hit when the pool holds fewer than K
  // negatives: the best epoch would always be the first, the test score 1.
  // A set with negative targets of each positive's own and no pool takes
  // its Hits@K from them (ogbl-citation2's).
  // A positive ranks at most K + 1 among K targets, so K must reach hits_k
  // there too.
  for (const auto& [set, name] : {std::pair{&sources.valid, "valid"}, {&sources.test, "test"}})
    BULKGNN_EXPECTS(set->positives.source.empty() || !set->negatives.source.empty() ||
                        set->negative_targets.empty() || set->targets_per_positive >= link.hits_k,
                    "link_train_options.hits_k {}: the {} set ranks each positive among its own "
                    "{} negative targets, fewer than K, so every epoch would score Hits@K 1; "
                    "lower it",
                    link.hits_k, name, set->targets_per_positive);
  for (const auto& [set, name] : {std::pair{&sources.valid, "valid"}, {&sources.test, "test"}})
    BULKGNN_EXPECTS(set->positives.source.empty() ||
                        (set->negatives.source.empty() && !set->negative_targets.empty()) ||
                        static_cast<std::int64_t>(set->negatives.source.size()) >= link.hits_k,
                    "link_train_options.hits_k {}: the {} set's pool holds {} negatives, fewer "
                    "than K, so every epoch would score Hits@K 1; lower it or draw more "
                    "negatives (link_split_options.negatives_per_positive)",
                    link.hits_k, name, set->negatives.source.size());
  check_evaluation_set(sources.valid, ds.num_nodes, "valid");
  check_evaluation_set(sources.test, ds.num_nodes, "test");
  BULKGNN_EXPECTS(sources.normalizer == nullptr ||
                      options.normalize_features != loader::feature_normalization::none,
                  "train_links: link_sources.normalizer is set but "
                  "train_options.normalize_features is none");
  link_run run(ds, options, link, sources);
  return run.execute(on_epoch);
}

}  // namespace bulkgnn::trainer
