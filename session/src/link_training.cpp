#include "bulkgnn/core/error.hpp"
#include "bulkgnn/core/hash.hpp"
#include "bulkgnn/kernels/exclude_edges.hpp"
#include "bulkgnn/loader/loader.hpp"
#include "bulkgnn/sampler/bulk_sampler.hpp"
#include "bulkgnn/session/training.hpp"

#include <fmt/format.h>

namespace bulkgnn::session {

namespace {

sampler::edge_list edges_of(const data::edge_arrays& edges) { return {edges.source, edges.target}; }

// Every edge of the split's parts, in order: two splits with the same sizes
// (another seed) differ here.
std::uint64_t digest_of(const data::link_split& split) {
  digest_hasher h;
  for (const auto* edges :
       {&split.train, &split.valid, &split.test, &split.valid_negatives, &split.test_negatives}) {
    h.add(static_cast<std::uint64_t>(edges->size()));
    for (std::size_t i = 0; i < edges->source.size(); ++i)
      h.add(kernels::edge_key(edges->target[i], edges->source[i]));
  }
  // Only where present, so that a split without them digests as before.
  for (const auto* t : {&split.valid_negative_targets, &split.test_negative_targets})
    if (!t->empty()) {
      h.add(t == &split.valid_negative_targets ? 1 : 2);
      h.add(static_cast<std::uint64_t>(t->per_positive));
      h.add(std::span<const std::int32_t>(t->targets));
    }
  return h.value();
}

// Each data-parallel rank loads its slice of every minibatch. The rows and
// features come from this process's whole dataset, never from other ranks:
// the training graph is the split's, which only this process holds.
loader::loader_options loading_for(const trainer::train_options& o) {
  auto l = o.loading;
  if (o.parallel == nullptr) return l;
  l.slice = o.parallel->ranks->rank();
  l.slices = o.parallel->ranks->size();
  l.on_failure = o.parallel->abort_all;
  return l;
}

}  // namespace

trainer::train_result train_links(const trainer::training_data& ds, const data::link_split& split,
                                  const trainer::train_options& options,
                                  const link_training_plan& plan,
                                  const trainer::epoch_callback& on_epoch) {
  BULKGNN_EXPECTS(ds.whole,
                  "train_links: link prediction needs the whole dataset (not a part of a "
                  "partitioned one)");
  BULKGNN_EXPECTS(split.train_graph.rows == ds.num_nodes,
                  "train_links: the link split's graph has {} vertices, the dataset {}",
                  split.train_graph.rows, ds.num_nodes);
  trainer::validate(options);
  const auto normalizer = trainer::feature_normalizer(ds, options);
  const auto* normalize = normalizer ? &*normalizer : nullptr;
  const csr_view train_graph = split.train_graph.view();
  sampler::bulk_sampler sampler(train_graph, options.sampling, options.exec);
  loader::minibatch_loader loader(
      {.graph = train_graph, .features = ds.features, .labels = ds.labels, .normalizer = normalize},
      sampler,
      loader::link_task{.positives = edges_of(split.train),
                        .negatives = plan.negatives,
                        .exclude = plan.exclude,
                        .shuffle = true},
      loading_for(options), options.exec);
  auto scoring = plan.scoring;
  scoring.source_settings["neg_ratio"] = plan.negatives.amount;
  scoring.source_settings["negative_mode"] =
      plan.negatives.mode == sampler::negative_mode::binary ? "binary" : "triplet";
  scoring.source_settings["negative_distribution"] =
      plan.negatives.distribution == sampler::negative_distribution::uniform ? "uniform" : "degree";
  scoring.source_settings["strict_negatives"] = plan.negatives.strict;
  scoring.source_settings["exclude"] = std::string(sampler::edge_exclusion_name(plan.exclude));
  scoring.source_settings["train_edges"] = split.train.size();
  scoring.source_settings["valid_edges"] = split.valid.size();
  scoring.source_settings["test_edges"] = split.test.size();
  scoring.source_settings["split_digest"] = fmt::format("{:016x}", digest_of(split));
  const trainer::link_sources sources{
      .train = loader,
      .valid = {.graph = train_graph,
                .positives = edges_of(split.valid),
                .negatives = edges_of(split.valid_negatives),
                .negative_targets = split.valid_negative_targets.targets,
                .targets_per_positive = split.valid_negative_targets.per_positive},
      .test = {.graph = split.test_graph.view(),
               .positives = edges_of(split.test),
               .negatives = edges_of(split.test_negatives),
               .negative_targets = split.test_negative_targets.targets,
               .targets_per_positive = split.test_negative_targets.per_positive},
      .sampler = &sampler,
      .normalizer = normalize};
  return trainer::train_links(ds, options, scoring, sources, on_epoch);
}

}  // namespace bulkgnn::session
