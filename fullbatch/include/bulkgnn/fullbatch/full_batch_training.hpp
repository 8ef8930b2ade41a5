#pragma once

#include "bulkgnn/comm/communicator.hpp"
#include "bulkgnn/core/executor.hpp"
#include "bulkgnn/fullbatch/closed_forms.hpp"
#include "bulkgnn/fullbatch/compression.hpp"
#include "bulkgnn/fullbatch/grid.hpp"
#include "bulkgnn/loader/feature_normalization.hpp"
#include "bulkgnn/trainer/adam.hpp"
#include "bulkgnn/trainer/epoch_loop.hpp"
#include "bulkgnn/trainer/model.hpp"
#include "bulkgnn/trainer/training_data.hpp"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace bulkgnn::fullbatch {

struct full_batch_options {
  // Kind (gcn: D̃^-1/2(A+I)D̃^-1/2, sage: mean), width, depth and dropout;
  // in_features and num_classes come from the dataset.
  trainer::model_config model;
  trainer::adam_options optimizer;
  loader::feature_normalization normalize_features = loader::feature_normalization::none;
  std::int64_t epochs = 100;
  std::int64_t eval_every = 1;  // 0: never evaluate
  std::uint32_t seed = 0;       // initial weights and dropout
  std::string split;            // empty: the dataset's first
  grid_kind grid = grid_kind::one_d;
  int replication = 1;
  std::string partition = "block";  // block or metis (the parts' vertices)
  compression_schedule compression;
  executor exec;  // a host back end
};

// Throws option_error naming the impossible option.
void validate(const full_batch_options& options, int ranks);

// What crossed ranks, summed over every rank, per stage.
using stage_bytes = std::map<std::string, std::int64_t>;

struct full_batch_epoch {
  std::int64_t epoch = 0;  // from 0
  double loss = 0;         // mean over the training vertices
  double train_acc = 0;    // of the training forward pass (with dropout)
  std::optional<double> valid_acc;
  std::optional<double> test_acc;
  double seconds = 0;       // forward, backward, gradient sum and step
  double eval_seconds = 0;  // the evaluation forward pass
  int compression_rate = 1;
  stage_bytes traffic;       // of the training step: forward, backward, gradients
  stage_bytes eval_traffic;  // of the evaluation pass
  // The largest over the ranks: peak resident set size this epoch, and the
  // most the grid held at once for one product besides the activations.
  std::int64_t peak_resident_bytes = 0;
  std::int64_t aggregation_peak_bytes = 0;
  std::vector<std::int64_t> peak_resident_bytes_by_rank;
  // Each rank's peak less its resident file-backed pages (the memory-mapped
  // dataset, which ranks on a node share and whose open checks touch it
  // whole): an estimate of the memory a rank holds alone.
  std::vector<std::int64_t> peak_private_bytes_by_rank;

  [[nodiscard]] nlohmann::json to_json() const;
};

// With the best validation epoch (trainer::best_validation).
struct full_batch_result : trainer::best_validation {
  std::vector<full_batch_epoch> epochs;
  std::vector<float> parameters;  // final weights, the same on every rank (checked)
  stage_bytes setup_traffic;      // degrees and tiles, before the first epoch
  std::int64_t parameter_count = 0;
  // SAR's boundary (closed_forms.hpp; 0 on the other grids) and the bytes the closed forms give an
  // epoch's training step on this grid.
  std::int64_t boundary_rows = 0;
  epoch_bytes predicted;
};

// Called after each epoch with the result so far (for progress lines and a
// metrics file rewritten every epoch).
using full_batch_callback =
    std::function<void(const full_batch_epoch&, const full_batch_result& so_far)>;

// Full-batch training on the whole graph every epoch, over the ranks of
// `world` laid out as options.grid (collective; a process alone passes a
// self communicator). Every rank reads only its part's rows of the graph
// and of the features from `data` (a whole dataset, memory-mapped). The
// same seed gives the same model on every grid and rank count, up to the
// order of float sums, unless compression is on.
[[nodiscard]] full_batch_result train_full_batch(const trainer::training_data& data,
                                                 const full_batch_options& options,
                                                 comm::communicator& world,
                                                 const full_batch_callback& on_epoch = {});

}  // namespace bulkgnn::fullbatch
