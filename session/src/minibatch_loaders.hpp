#pragma once

#include "bulkgnn/core/csr.hpp"
#include "bulkgnn/loader/loader.hpp"
#include "bulkgnn/sampler/bulk_sampler.hpp"
#include "bulkgnn/session/layout.hpp"
#include "bulkgnn/trainer/training_data.hpp"
#include "bulkgnn/trainer/training_run.hpp"

#include <memory>
#include <optional>

namespace bulkgnn::session::detail {

// The multistage loaders of a training run over `ds` (session::train):
// data-parallel ranks each load their slice of every minibatch, on the
// executors of train_options (exec samples and gathers, model_exec trains).
class minibatch_loaders {
 public:
  minibatch_loaders(const trainer::training_data& ds, const trainer::train_options& o,
                    const loader::row_normalizer* normalizer);

  [[nodiscard]] trainer::minibatch_sources sources();

 private:
  // The graph and the (normalised) features where sampling and gathering on
  // a GPU read them (training_layout::sample_on_gpu); the host stages read
  // the dataset in place.
  struct device_copies {
    csr_matrix graph;
    buffer<float> features;
  };

  static std::optional<device_copies> device_copies_for(const trainer::training_data& ds,
                                                        const trainer::train_options& o,
                                                        const training_layout& placement,
                                                        const loader::row_normalizer* normalizer);
  // Every valid/test vertex, whatever --max-minibatches limits training to.
  loader::minibatch_source& eval_loader();
  // A sharded graph's rows come through the data-parallel row source.
  [[nodiscard]] std::unique_ptr<sampler::bulk_sampler> sampler_for() const;
  [[nodiscard]] loader::graph_source source() const;
  [[nodiscard]] loader::loader_options loading_for(loader::loader_options l) const;
  // A model on a GPU fed by host stages gets its minibatches copied by a
  // stage of their own, on a stream of its own on that GPU, so that the
  // copies overlap the train step; the gather writes the features into
  // pinned buffers, which that stage copies by DMA. The stage's function
  // keeps the copy executor (and its pinned memory) alive with the loader.
  static void add_host_to_device(const executor& model, loader::loader_options& l);

  const trainer::training_data& ds_;
  const trainer::train_options& options_;
  const loader::row_normalizer* normalizer_;
  training_layout layout_;
  std::optional<device_copies> device_copies_;
  std::unique_ptr<sampler::bulk_sampler> sampler_;
  // How the sampler cuts epochs into subgraphs (null for samplers that
  // batch seeds), shared by both loaders.
  std::shared_ptr<const sampler::subgraph_batches> subgraphs_;
  loader::minibatch_loader loader_;
  std::unique_ptr<sampler::bulk_sampler> eval_sampler_;
  std::optional<loader::minibatch_loader> eval_loader_;
};

}  // namespace bulkgnn::session::detail
