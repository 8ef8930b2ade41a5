#include "bulkgnn/core/error.hpp"
#include "bulkgnn/loader/loader.hpp"
#include "bulkgnn/sampler/bulk_sampler.hpp"
#include "bulkgnn/session/training.hpp"

namespace bulkgnn::session {

namespace {

sampler::edge_list edges_of(const data::edge_arrays& edges) { return {edges.source, edges.target}; }

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
      options.loading, options.exec);
  auto scoring = plan.scoring;
  scoring.source_settings["negatives_per_positive"] = plan.negatives.amount;
  scoring.source_settings["negative_mode"] =
      plan.negatives.mode == sampler::negative_mode::binary ? "binary" : "triplet";
  scoring.source_settings["negative_distribution"] =
      plan.negatives.distribution == sampler::negative_distribution::uniform ? "uniform" : "degree";
  scoring.source_settings["strict_negatives"] = plan.negatives.strict;
  scoring.source_settings["exclude"] = std::string(sampler::edge_exclusion_name(plan.exclude));
  scoring.source_settings["train_edges"] = split.train.size();
  scoring.source_settings["valid_edges"] = split.valid.size();
  scoring.source_settings["test_edges"] = split.test.size();
  const trainer::link_sources sources{.train = loader,
                                      .valid = {.graph = train_graph,
                                                .positives = edges_of(split.valid),
                                                .negatives = edges_of(split.valid_negatives)},
                                      .test = {.graph = split.test_graph.view(),
                                               .positives = edges_of(split.test),
                                               .negatives = edges_of(split.test_negatives)},
                                      .sampler = &sampler,
                                      .normalizer = normalize};
  return trainer::train_links(ds, options, scoring, sources, on_epoch);
}

}  // namespace bulkgnn::session
