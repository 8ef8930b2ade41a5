#pragma once

#include "bulkgnn/core/progress.hpp"
#include "bulkgnn/kernels/loss.hpp"
#include "bulkgnn/loader/loader.hpp"
#include "bulkgnn/trainer/adam.hpp"
#include "bulkgnn/trainer/link_head.hpp"
#include "bulkgnn/trainer/model.hpp"
#include "bulkgnn/trainer/training_run.hpp"

#include "run_support.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <cstdint>
#include <functional>
#include <optional>
#include <utility>

namespace bulkgnn::trainer::detail {

// What a run trains and has recorded: the model, its optimiser and every
// epoch so far (resumed ones included), as records and as saved history;
// for link prediction also the scoring head and its optimiser, whose
// parameters and moments a checkpoint holds after the model's.
struct training_state {
  training_state(const model_config& config, const train_options& o)
      : model(config, o.sampling.seed, model_executor(o)),
        optimizer(model.parameters().size(), o.optimizer, model_executor(o)) {}

  // Adds a link head of `kind` over the model's output width.
  void add_link_head(link_head_kind kind, const train_options& o) {
    head.emplace(kind, model.config().num_classes, o.sampling.seed, model_executor(o),
                 model.config().gemm.value_or(kernels::default_gemm_mode(model_executor(o))));
    head_optimizer.emplace(head->parameters().size(), o.optimizer, model_executor(o));
  }

  // One optimiser step over the model and the head (Adam is entrywise, so
  // two optimisers over the parts step as one over the whole).
  void step() {
    optimizer.step(model.parameters(), model.gradients());
    if (head && !head->parameters().empty())
      head_optimizer->step(head->parameters(), head->gradients());
  }

  // Zero gradients, for a step in which this rank has nothing to train on
  // (the ranks still sum them and step together).
  void zero_gradients();
  // Sums the model's and the head's gradients over the data-parallel ranks.
  void all_reduce_gradients(const data_parallel& parallel);

  // The model's values, then the head's.
  [[nodiscard]] std::vector<float> parameters_on_host() const;
  [[nodiscard]] std::vector<float> first_moment_on_host() const;
  [[nodiscard]] std::vector<float> second_moment_on_host() const;
  [[nodiscard]] std::size_t parameter_count() const;
  // Restores what the *_on_host() calls gave, and the optimiser steps.
  void restore(std::span<const float> parameters, std::span<const float> first,
               std::span<const float> second, std::int64_t steps);

  // Appends an epoch; `as_saved` is its history entry when it comes from a
  // checkpoint (kept as written there).
  void add_record(epoch_record record, std::optional<nlohmann::json> as_saved = std::nullopt) {
    history.push_back(as_saved ? std::move(*as_saved) : record.to_json());
    result.epochs.push_back(std::move(record));
  }

  gnn_model model;
  adam optimizer;
  std::optional<link_head> head;
  std::optional<adam> head_optimizer;
  nlohmann::json history = nlohmann::json::array();
  train_result result;
};

// Saves a training_state after every epoch (rank 0) and restores it on
// resume, bit-exactly, in the run's checkpoint directory.
class run_checkpointer {
 public:
  explicit run_checkpointer(const train_options& o) : options_(o) {}

  // A fresh run must not overwrite a checkpoint it was not asked to resume.
  void check_fresh() const;
  void save(const training_state& state, std::int64_t epochs_done) const;
  // Loads the checkpoint and returns the first epoch still to train.
  std::int64_t restore(training_state& state) const;

 private:
  const train_options& options_;
};

// What one rank trained on in a step: its loss and its share of the
// minibatch, by which the loss was weighted.
struct step_result {
  kernels::loss_result loss;
  double share = 1;
};

// One epoch's train loop over `stream` (started): for each minibatch,
// `train_step(mb)` runs forward and backward on what this rank holds of it
// and returns its step_result, or nullopt where it holds nothing (its
// gradients are zero then); the ranks sum the gradients and every rank takes
// the optimiser step. Returns the epoch's record of loss and train accuracy.
template <class TrainStep>
epoch_record train_minibatches(loader::minibatch_source& stream, training_state& state,
                               const train_options& o, std::uint32_t epoch,
                               TrainStep&& train_step) {
  progress bar(fmt::format("epoch {}/{}", epoch + 1, o.epochs), stream.num_minibatches(),
               " minibatches", o.quiet);
  // Sums over this rank's slices: the loss weighted by each slice's share of
  // its minibatch, correct predictions, predictions.
  double sums[3] = {0, 0, 0};
  std::int64_t minibatches = 0;
  while (auto mb = stream.next()) {
    step_in_flight step(state.model.exec(), *mb);
    if (const std::optional<step_result> result = train_step(*mb)) {
      sums[0] += result->loss.loss * result->share;
      sums[1] += static_cast<double>(result->loss.correct);
      sums[2] += static_cast<double>(result->loss.count);
    } else {
      state.zero_gradients();
    }
    if (o.parallel != nullptr) state.all_reduce_gradients(*o.parallel);
    state.step();
    step.finish();
    bar.update(++minibatches);
  }
  auto r = record_of(epoch, sums, minibatches, o.parallel);
  bar.finish();
  return r;
}

// The epoch loop of a minibatch run (run_epochs) with its checkpoints:
// restores `state` when o.resume asks, then each epoch `train(epoch)`
// trains it, `evaluate(record)` evaluates it when it is due, and the record
// is kept, saved (rank 0) and passed to on_epoch. Ends with the final
// weights in state.result and, over data-parallel ranks, the check that
// every rank has them.
void run_with_checkpoints(training_state& state, const train_options& o,
                          const std::function<epoch_record(std::int64_t)>& train,
                          const std::function<void(epoch_record&)>& evaluate,
                          const epoch_callback& on_epoch);

}  // namespace bulkgnn::trainer::detail
