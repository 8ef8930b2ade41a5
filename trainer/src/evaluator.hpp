#pragma once

#include "bulkgnn/data/dataset.hpp"
#include "bulkgnn/loader/loader.hpp"
#include "bulkgnn/trainer/model.hpp"
#include "bulkgnn/trainer/share_inference.hpp"
#include "bulkgnn/trainer/training_data.hpp"
#include "bulkgnn/trainer/training_run.hpp"
#include "run_support.hpp"

#include <cstdint>
#include <optional>
#include <span>
#include <vector>

namespace bulkgnn::trainer::detail {

// Valid and test accuracy of a model after an epoch, in one of four ways:
// over the full graph as `plan` says (by shares, in pieces, or whole), or
// over minibatches from the evaluation source (all reduced over
// data-parallel ranks).
class evaluator {
 public:
  evaluator(const training_data& ds, const train_options& o, const model_config& config,
            const data::split& split, const loader::row_normalizer* normalizer,
            const evaluation_plan& plan);

  // Sets r.valid_acc, r.test_acc and r.eval_seconds.
  void evaluate(epoch_record& r, gnn_model& model, const minibatch_sources& sources);

 private:
  // Accuracy over `vertices` whose logits this rank's share holds, summed over
  // the ranks (collective); absent for no vertices.
  [[nodiscard]] std::optional<double> share_accuracy(const executor& exec,
                                                     dense_view<const float> share_logits,
                                                     std::span<const vertex_t> vertices,
                                                     std::span<const std::int32_t> labels) const;
  // Every valid/test vertex, whatever --max-minibatches limits training to.
  std::optional<double> sampled_accuracy(gnn_model& model, const minibatch_sources& sources,
                                         std::span<const vertex_t> vertices,
                                         std::int64_t key_epoch);

  const training_data& ds_;
  const train_options& options_;
  const model_config& config_;
  const data::split& split_;
  std::vector<std::int32_t> valid_labels_;
  std::vector<std::int32_t> test_labels_;
  placed_labels valid_;
  placed_labels test_;
  const loader::row_normalizer* normalizer_;
  std::optional<aggregation_block> full_block_;
  evaluation_plan plan_;
  detail::evaluation_features features_;
  std::optional<inference_pieces> pieces_;  // built at the first evaluation in pieces
  loader::minibatch_source* eval_source_ = nullptr;
};

}  // namespace bulkgnn::trainer::detail
