#pragma once

#include "bulkgnn/core/buffer_pool.hpp"
#include "bulkgnn/core/executor.hpp"
#include "bulkgnn/loader/loader.hpp"
#include "bulkgnn/loader/stage.hpp"
#include "bulkgnn/sampler/bulk_sampler.hpp"

#include <cstdint>
#include <memory>
#include <string>
#include <utility>

// The stages a minibatch_loader composes for an epoch, in pipeline order:
// shuffle → sample → gather (→ host_to_device, host_to_device.hpp). Each is
// an object of its own, so that a loader for another task can compose them
// differently and a test can drive one alone through a stage_context.
namespace bulkgnn::loader {

// Cuts an epoch's shuffled seeds into bulk requests: epoch_start in,
// ⌈minibatches / bulk⌉ bulk_requests out, the last one shorter.
class shuffle_stage final : public stage {
 public:
  // With `subgraphs`, the minibatches it cuts (epoch_plan).
  shuffle_stage(std::int64_t batch_size, std::int64_t bulk, std::uint32_t sampler_seed,
                std::shared_ptr<const sampler::subgraph_batches> subgraphs = nullptr)
      : batch_size_(batch_size),
        bulk_(bulk),
        sampler_seed_(sampler_seed),
        subgraphs_(std::move(subgraphs)) {}

  [[nodiscard]] std::string name() const override { return "shuffle"; }
  [[nodiscard]] bool process(stage_item item, stage_context& context) override;

 private:
  std::int64_t batch_size_;
  std::int64_t bulk_;
  std::uint32_t sampler_seed_;
  std::shared_ptr<const sampler::subgraph_batches> subgraphs_;
};

// Samples one bulk of whole minibatches, or this loader's parts of them
// (bulk_sampler::sample_slices): bulk_request in, bulk_sample out.
class sample_stage final : public stage {
 public:
  sample_stage(sampler::bulk_sampler& sampler, sampler::minibatch_split split)
      : sampler_(sampler), split_(split) {}

  [[nodiscard]] std::string name() const override { return "sample"; }
  [[nodiscard]] bool process(stage_item item, stage_context& context) override;

 private:
  sampler::bulk_sampler& sampler_;
  sampler::minibatch_split split_;
};

// A link loader's shuffle: an epoch's link plan over `positives` (its
// shuffle and negatives keyed on options.seed and the epoch) cut into link
// requests of `bulk` minibatches: epoch_start in (its seeds unused),
// link_requests out.
class link_shuffle_stage final : public stage {
 public:
  // What it names must outlive the stage.
  link_shuffle_stage(sampler::edge_list positives, const sampler::negative_sampler& negatives,
                     sampler::link_options options, std::int64_t bulk)
      : positives_(positives), negatives_(negatives), options_(options), bulk_(bulk) {}

  [[nodiscard]] std::string name() const override { return "shuffle"; }
  [[nodiscard]] bool process(stage_item item, stage_context& context) override;

 private:
  sampler::edge_list positives_;
  const sampler::negative_sampler& negatives_;
  sampler::link_options options_;
  std::int64_t bulk_;
};

// Samples one bulk of link minibatches (sampler::sample_links, each
// minibatch's own edges left out as `exclude` says): link_request in,
// link_bulk out.
class link_sample_stage final : public stage {
 public:
  // Part `slice` of `slices` of every minibatch (sampler::slice_of).
  link_sample_stage(sampler::bulk_sampler& sampler, sampler::edge_exclusion exclude, int slice,
                    int slices)
      : sampler_(sampler), exclude_(exclude), slice_(slice), slices_(slices) {}

  [[nodiscard]] std::string name() const override { return "sample"; }
  [[nodiscard]] bool process(stage_item item, stage_context& context) override;

 private:
  sampler::bulk_sampler& sampler_;
  sampler::edge_exclusion exclude_;
  int slice_;
  int slices_;
};

// Extracts each minibatch of a bulk and gathers (or fetches) and normalises
// the features of its input vertices into a buffer of `buffers`: bulk_sample
// (or link_bulk, whose supervision goes with each minibatch) in, one
// ready_minibatch per minibatch out. On a device, a minibatch's
// arrays are complete when it is handed on, so that a model on a stream of
// its own reads them without ordering against this one.
class gather_stage final : public stage {
 public:
  // `source` is a set of views (kept by value); what they view, `buffers`
  // and the normalizer and fetcher it names must outlive the stage.
  gather_stage(graph_source source, buffer_pool<float>& buffers, executor exec)
      : source_(source), buffers_(buffers), exec_(std::move(exec)) {}

  [[nodiscard]] std::string name() const override { return "gather"; }
  [[nodiscard]] bool process(stage_item item, stage_context& context) override;

 private:
  [[nodiscard]] ready_minibatch gather(const sampler::bulk_sample& bulk, std::int64_t j);

  graph_source source_;
  buffer_pool<float>& buffers_;
  executor exec_;
};

}  // namespace bulkgnn::loader
