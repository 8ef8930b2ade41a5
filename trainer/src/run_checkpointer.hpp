#pragma once

#include "bulkgnn/trainer/adam.hpp"
#include "bulkgnn/trainer/model.hpp"
#include "bulkgnn/trainer/training_run.hpp"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <optional>
#include <utility>

namespace bulkgnn::trainer::detail {

// What a run trains and has recorded: the model, its optimiser and every
// epoch so far (resumed ones included), as records and as saved history.
struct training_state {
  training_state(const model_config& config, const train_options& o)
      : model(config, o.sampling.seed, model_executor(o)),
        optimizer(model.parameters().size(), o.optimizer, model_executor(o)) {}

  // Appends an epoch; `as_saved` is its history entry when it comes from a
  // checkpoint (kept as written there).
  void add_record(epoch_record record, std::optional<nlohmann::json> as_saved = std::nullopt) {
    history.push_back(as_saved ? std::move(*as_saved) : record.to_json());
    result.epochs.push_back(std::move(record));
  }

  gnn_model model;
  adam optimizer;
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

}  // namespace bulkgnn::trainer::detail
