#pragma once

#include "bulkgnn/core/csr.hpp"
#include "bulkgnn/loader/feature_normalization.hpp"
#include "bulkgnn/loader/loader.hpp"
#include "bulkgnn/sampler/bulk_sampler.hpp"
#include "bulkgnn/sampler/link_seeds.hpp"
#include "bulkgnn/trainer/link_head.hpp"
#include "bulkgnn/trainer/training_data.hpp"
#include "bulkgnn/trainer/training_run.hpp"

#include <nlohmann/json.hpp>

#include <cstdint>

// Link prediction: a GNN encoder whose last layer gives each vertex an
// embedding, a head that scores vertex pairs from their embeddings, binary
// cross-entropy over each minibatch's positive and negative pairs, and
// OGB's Hits@K and MRR on held-out links.
namespace bulkgnn::trainer {

struct link_train_options {
  link_head_kind head = link_head_kind::dot;
  std::int64_t hits_k = 50;  // Hits@K against each held-out set's pool of negatives
  // MRR: corrupted tails per held-out positive (its source kept), drawn once
  // from the seed, none an edge of the whole graph (ogbl-citation2's protocol,
  // which ranks against 1000).
  std::int64_t ranking_negatives = 100;
  // The valid MRR picks the best epoch (ogbl-citation2's protocol, whose
  // metric is MRR), not the valid Hits@K.
  bool select_by_mrr = false;
  // What the train source draws by (the split, negatives, exclusion), which
  // determines the weights as much as the rest: added to the run's
  // fingerprint, so that a checkpoint is never resumed with other draws.
  nlohmann::json source_settings = nlohmann::json::object();
};

// option_error naming link_train_options.hits_k or .ranking_negatives.
void validate(const link_train_options& options);

// Held-out links and the graph that messages pass over while they are
// scored (PyG's RandomLinkSplit: the training edges for valid, the training
// and valid edges for test).
struct link_evaluation_set {
  csr_view graph;                // in-neighbour CSR over every vertex
  sampler::edge_list positives;  // labels ignored
  sampler::edge_list negatives;  // one pool for Hits@K
  // Each positive's own negative targets (ogbl-citation2's), per_positive
  // of them each, positive by positive: MRR ranks against them (rather than
  // link_train_options.ranking_negatives drawn tails), and so does Hits@K
  // where there is no pool. Empty: none.
  std::span<const vertex_t> negative_targets = {};
  std::int64_t targets_per_positive = 0;
};

struct link_sources {
  // Started once per epoch with no seeds: a link loader over the training
  // positives (ready_minibatch::link set), labels in [0, 1].
  loader::minibatch_source& train;
  link_evaluation_set valid;
  link_evaluation_set test;
  // The sampler behind `train`, if any (its stage times go into the records).
  const sampler::bulk_sampler* sampler = nullptr;
  // What the train source applies to feature rows, which evaluation applies
  // too; null with train_options::normalize_features set: the run computes
  // its own.
  const loader::row_normalizer* normalizer = nullptr;
};

// Trains an encoder (options.model; its output width is the hidden width)
// and a link head on the minibatches of `sources`, evaluating Hits@K and MRR
// over the whole graph after the epochs train_options::eval_every names, the
// best epoch by valid Hits@K (or MRR: link_train_options::select_by_mrr). Checkpoints and resume as
// train(): the head's weights and moments follow the encoder's. Over options.parallel's ranks, each
// trains on its slice of every minibatch (sampler::slice_of), weighted by its share of the
// minibatch's pairs, and the gradients are summed; every rank holds the whole dataset and evaluates
// alike. Host back ends and full-graph evaluation so far: anything else is an option_error naming
// it.
[[nodiscard]] train_result train_links(const training_data& ds, const train_options& options,
                                       const link_train_options& link, const link_sources& sources,
                                       const epoch_callback& on_epoch = {});

}  // namespace bulkgnn::trainer
