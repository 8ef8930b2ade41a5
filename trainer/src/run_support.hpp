#pragma once

#include "bulkgnn/core/executor.hpp"
#include "bulkgnn/loader/loader.hpp"
#include "bulkgnn/trainer/layers.hpp"
#include "bulkgnn/trainer/matrix.hpp"
#include "bulkgnn/trainer/model.hpp"
#include "bulkgnn/trainer/placement.hpp"
#include "bulkgnn/trainer/training_data.hpp"
#include "bulkgnn/trainer/training_run.hpp"

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

// Sums the gradients over data-parallel ranks: on the device where a device
// reducer is given, else over the ranks' communicator, through host memory
// when the model's are elsewhere.
void all_reduce_gradients(const data_parallel& parallel, gnn_model& model);

}  // namespace bulkgnn::trainer::detail
