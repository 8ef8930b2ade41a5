#pragma once

#include "bulkgnn/core/executor.hpp"
#include "bulkgnn/loader/loader.hpp"
#include "bulkgnn/trainer/layers.hpp"
#include "bulkgnn/trainer/matrix.hpp"
#include "bulkgnn/trainer/model.hpp"
#include "bulkgnn/trainer/placement.hpp"
#include "bulkgnn/trainer/training_data.hpp"
#include "bulkgnn/trainer/training_run.hpp"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

// What the pieces of a minibatch training run share (training_run.cpp,
// evaluator.cpp, run_checkpointer.cpp): labels and minibatches
// placed where the model reads them, and the steps around a train step.
namespace bulkgnn::trainer::detail {

// Evaluation streams are keyed on epochs that training never uses (training
// epochs stay below 2^30), so they never repeat a training sample.
inline constexpr std::uint32_t valid_epoch_base = 0x80000000u;
inline constexpr std::uint32_t test_epoch_base = 0xC0000000u;
inline constexpr std::int64_t max_epochs = std::int64_t{1} << 30;

// The labels of `vertices`; option_error if one has none (-1).
[[nodiscard]] std::vector<std::int32_t> labels_of(const training_data& ds,
                                                  std::span<const vertex_t> vertices,
                                                  const char* split_part);

// Host arrays of vertices and labels, as the model's executor reads them.
struct placed_labels {
  placed_labels(const executor& exec, std::span<const vertex_t> v, std::span<const std::int32_t> l)
      : vertices(exec, v, memory_space::host), labels(exec, l, memory_space::host) {}

  placed<vertex_t> vertices;
  placed<std::int32_t> labels;
};

// `logits_of_all` and `set` are in the memory of `exec`, the model's executor.
[[nodiscard]] std::optional<double> accuracy_of(const executor& exec,
                                                dense_view<const float> logits_of_all,
                                                const placed_labels& set);

// A minibatch's arrays where the model's executor reads them: copies in
// device memory for a GPU, the loader's own buffers on the host.
struct placed_minibatch {
  placed_minibatch(const executor& exec, const loader::ready_minibatch& mb, layer_kind kind,
                   bool with_backward);

  std::vector<aggregation_block> blocks;
  placed_matrix features;
  placed<std::int32_t> labels;
  placed<vertex_t> row_ids;
};

// The model's forward over a placed minibatch: over its feature rows, or,
// for a model with a learned table, over the table's rows of its input
// vertices.
[[nodiscard]] dense_view<const float> forward_placed(gnn_model& model, const placed_minibatch& mb,
                                                     std::optional<kernels::dropout_key> dropout);

// What the model reads over the whole graph: `features`, or its learned
// table where it has one.
[[nodiscard]] dense_view<const float> whole_graph_inputs(const gnn_model& model,
                                                         dense_view<const float> features);

// A minibatch's buffers may come from another stream (the host-to-device
// stage's, or the GPU-to-GPU feature fetch's), which frees them as soon as
// the minibatch is dropped: the model's stream must be done with them first.
void finish_step(const executor& model_exec, const loader::ready_minibatch& mb);

// finish_step on every way out of a step: declared after the minibatch, it
// runs before the minibatch is dropped, also when the step throws (a loss
// that is not finite, say), where the model's stream may still be reading
// the minibatch's buffers. finish() is the normal way out and reports errors;
// on a throw the destructor waits as well as it can and keeps the first error.
class step_in_flight {
 public:
  step_in_flight(const executor& model_exec, const loader::ready_minibatch& mb)
      : model_exec_(model_exec), mb_(mb) {}
  step_in_flight(const step_in_flight&) = delete;
  step_in_flight& operator=(const step_in_flight&) = delete;
  ~step_in_flight();

  void finish();

 private:
  const executor& model_exec_;
  const loader::ready_minibatch& mb_;
  bool finished_ = false;
};

// Sums `gradients` (in exec's memory) over data-parallel ranks: on the
// device where a device reducer is given, else over the ranks'
// communicator, through host memory when they are elsewhere.
void all_reduce_gradients(const data_parallel& parallel, const executor& exec,
                          std::span<float> gradients);

// A normalised copy of every feature row, for full-graph evaluation (whose
// first layer aggregates a matrix of the same size anyway).
[[nodiscard]] matrix normalized_copy(dense_view<const float> features,
                                     const loader::row_normalizer& normalizer);

// Every (normalised) feature row of the whole graph where an executor's
// kernels read it, for full-graph evaluation. A copy in device memory stays
// for later evaluations; a normalised host copy lives for one
// (release_host_copy drops it), as it would only add to the epochs' peak.
class evaluation_features {
 public:
  [[nodiscard]] dense_view<const float> view(const executor& exec, dense_view<const float> features,
                                             const loader::row_normalizer* normalizer);
  void release_host_copy() { normalized_.reset(); }

 private:
  std::optional<matrix> normalized_;
  std::optional<placed_matrix> placed_;
};

// An epoch's record from the sums its train loop kept over this rank's
// slices (the loss weighted by each slice's share of its minibatch, correct
// predictions, predictions), summed over `parallel`'s ranks if given
// (collective): the mean loss per minibatch and the share correct.
[[nodiscard]] epoch_record record_of(std::uint32_t epoch, std::span<double, 3> sums,
                                     std::int64_t minibatches, const data_parallel* parallel);

// The model a run over `ds` trains: o.model with the layer layer_for()
// picks, in_features from the dataset and `outputs` columns out of its last
// layer (classes, or link prediction's embedding width). option_error when
// the sampler's blocks are not one per layer.
[[nodiscard]] model_config model_of(const training_data& ds, const train_options& o,
                                    std::int64_t outputs);

// The settings that determine a run's weights (dataset, sampler, model,
// optimiser, seed): a checkpoint holds them, and a resumed run must match.
[[nodiscard]] nlohmann::json fingerprint_of(const training_data& ds, const train_options& o,
                                            const model_config& model, const std::string& split);

// What an epoch's record measures around its train loop: the pipeline's
// report, the sampler's stage times, the GEMMs' work and the peak resident
// memory. Constructed before the epoch's stream starts (the sample stage
// adds to the sampler's times), filled in after it ends.
class epoch_measurement {
 public:
  epoch_measurement(const gnn_model& model, const sampler::bulk_sampler* sampler);

  // Sets r.pipeline, r.seconds, r.sampler_stages, r.gemm_* and
  // r.peak_resident_bytes.
  void fill(epoch_record& r, const loader::minibatch_source& stream) const;

 private:
  [[nodiscard]] std::map<std::string, double> sampler_times() const;

  const gnn_model& model_;
  const sampler::bulk_sampler* sampler_;
  gemm_stats gemm_before_;
  std::map<std::string, double> sampler_before_;
};

}  // namespace bulkgnn::trainer::detail
