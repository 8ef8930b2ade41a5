#pragma once

#include "bulkgnn/core/buffer.hpp"
#include "bulkgnn/core/dense.hpp"
#include "bulkgnn/core/executor.hpp"
#include "bulkgnn/kernels/activation.hpp"
#include "bulkgnn/kernels/gemm.hpp"
#include "bulkgnn/trainer/aggregation.hpp"
#include "bulkgnn/trainer/layers.hpp"
#include "bulkgnn/trainer/matrix.hpp"

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace bulkgnn::trainer {

// One GEMM of a train step, as benchmarks/trainer/gemm_efficiency replays it.
struct gemm_call {
  kernels::gemm_op op_a = kernels::gemm_op::plain;
  kernels::gemm_op op_b = kernels::gemm_op::plain;
  std::int64_t m = 0;
  std::int64_t n = 0;
  std::int64_t k = 0;
  double seconds = 0;
};

// GEMM work of forward() and backward(), for the trainer's throughput
// report; with `log` set, every call is also appended there.
struct gemm_stats {
  double flops = 0;
  double seconds = 0;
  std::int64_t calls = 0;
  std::vector<gemm_call>* log = nullptr;
};

struct model_config {
  layer_kind kind = layer_kind::sage;
  std::int64_t in_features = 0;
  std::int64_t hidden = 256;
  std::int64_t num_classes = 0;
  int layers = 2;
  float dropout = 0.5f;
  // How the layers' GEMMs and bias sums run (kernels/gemm.hpp). Unset: fast
  // (cuBLAS) on a GPU, exact on the cpu. Runs compared bit for bit with
  // another back end ask for exact.
  std::optional<kernels::gemm_mode> gemm = std::nullopt;
  // Learnable input rows (torch.nn.Embedding), for graphs without node
  // features: > 0 gives the model a table of embedding_rows × in_features,
  // trained with the layers, whose rows forward_embedded() takes as input.
  std::int64_t embedding_rows = 0;
};

// option_error naming the option (--layers, --hidden, --dropout in [0, 1)).
void validate(const model_config& config);

// One parameter tensor inside the model's flat parameter vector. Names follow
// PyG's state_dict (convs.L.lin_l.weight, ...), but a weight is stored
// in × out, the transpose of torch.nn.Linear's out × in, so that a layer is
// H·W without transposes.
struct parameter_tensor {
  std::string name;
  std::int64_t rows = 0;
  std::int64_t cols = 0;
  std::size_t offset = 0;

  [[nodiscard]] std::size_t size() const { return static_cast<std::size_t>(rows * cols); }
};

// A stack of sage or gcn layers as PyG's BasicGNN builds it: ReLU then
// dropout between layers, nothing after the last; optionally a learnable
// embedding table as the input (torch.nn.Embedding). Parameters live in one flat
// vector (gradients in another of the same layout) so that the optimiser and
// checkpoints handle a single span. Same seed and inputs give bit-identical
// outputs and gradients for any thread count.
class gnn_model {
 public:
  // Weights and biases U(−1/√fan_in, 1/√fan_in) like PyG's Linear, tensor i
  // drawn from the Philox stream keyed {seed, 0xFFFFFFFF, 0xFFFFFFFF, i, 0}.
  gnn_model(const model_config& config, std::uint32_t seed, executor exec = {});

  // blocks.size() == layers, blocks[0] input-most; features has
  // blocks[0].forward.cols rows and in_features cols. Returns the logits
  // (blocks.back().forward.rows × num_classes), valid until the next forward.
  // Dropout (inverted, p = config.dropout) only when a key is given, masks
  // as kernels::relu_dropout draws them with layer = l. `blocks` and `features` must
  // stay alive until backward() has run.
  dense_view<const float> forward(std::span<const aggregation_block> blocks,
                                  dense_view<const float> features,
                                  std::optional<kernels::dropout_key> dropout);

  // forward() over rows `input_ids` of the embedding table (a model with
  // config.embedding_rows > 0): input_ids has blocks[0].forward.cols ids in
  // the executor's memory, each once, and must stay alive until backward().
  // backward() then also gives the table's gradient: dLoss/dinput at those
  // rows, zero at every other.
  dense_view<const float> forward_embedded(std::span<const aggregation_block> blocks,
                                           std::span<const vertex_t> input_ids,
                                           std::optional<kernels::dropout_key> dropout);

  // The embedding table (embedding_rows × in_features), in the executor's
  // memory: the features of full-graph inference. Empty without one.
  [[nodiscard]] dense_view<const float> embedding() const;

  // Backward of the last forward given dLoss/dlogits; overwrites
  // gradients(). Needs blocks built with_backward. dLoss/dfeatures costs a
  // sparse product over the largest block, so it is computed only on request
  // (see input_gradient()) or where the features are embedding rows.
  void backward(dense_view<const float> grad_logits, bool with_input_gradient = false);

  // dLoss/dfeatures of the last backward run with_input_gradient.
  [[nodiscard]] dense_view<const float> input_gradient() const;

  // Layer l alone, no dropout (ReLU after every layer but the last): for
  // layer-wise full-neighbourhood inference. Not counted in gemm().
  [[nodiscard]] matrix forward_layer(int l, const aggregation_block& block,
                                     dense_view<const float> x) const;

  // The flat parameter and gradient vectors, in the executor's memory (the
  // device's for a cuda executor): for kernels on that executor.
  [[nodiscard]] std::span<float> parameters() { return {parameters_.data(), parameters_.size()}; }
  [[nodiscard]] std::span<const float> parameters() const {
    return {parameters_.data(), parameters_.size()};
  }
  [[nodiscard]] std::span<const float> gradients() const {
    return {gradients_.data(), gradients_.size()};
  }
  // For data-parallel ranks, which sum gradients before the optimiser step.
  [[nodiscard]] std::span<float> mutable_gradients() {
    return {gradients_.data(), gradients_.size()};
  }
  [[nodiscard]] memory_space space() const { return parameters_.space(); }
  [[nodiscard]] const executor& exec() const { return exec_; }

  // Copies between the flat vectors and host memory, wherever they live
  // (checkpoints, results, reductions staged through the host).
  [[nodiscard]] std::vector<float> parameters_on_host() const;
  void set_parameters(std::span<const float> values);
  [[nodiscard]] std::vector<float> gradients_on_host() const;
  [[nodiscard]] std::span<const parameter_tensor> tensors() const { return tensors_; }

  [[nodiscard]] const model_config& config() const { return config_; }
  // Accumulated over forward() and backward().
  // On a device the times are the device's (CUDA events around each GEMM,
  // read here, which waits for the last one), not the host's queueing time.
  [[nodiscard]] const gemm_stats& gemm() const;
  void reset_gemm_stats();
  // Appends every later GEMM call of forward() and backward() to `log`
  // (nullptr stops), for benchmarks that replay the shapes.
  void set_gemm_log(std::vector<gemm_call>* log) { gemm_stats_.log = log; }

  // The sparse step of every layer, forward and backward (a local sparse
  // product unless a distributed scheme installs its own). `a` must outlive
  // the model or the next call.
  void set_aggregation(aggregation& a) { aggregation_ = &a; }

 private:
  // Where layer l's tensors sit in the flat vectors; w_self only for sage.
  // [W_neigh; W_self] is one contiguous 2·in × out matrix.
  struct layer_slots {
    std::int64_t in = 0;
    std::int64_t out = 0;
    std::size_t w_neigh = 0;
    std::size_t w_self = 0;
    std::size_t bias = 0;
  };

  // Per-layer buffers reused across steps, in the executor's memory.
  struct layer_buffers {
    explicit layer_buffers(memory_resource& memory);

    matrix aggregated;       // A·H, kept for the weight gradient
    matrix output;           // layer output, after the activation when there is one
    matrix grad_aggregated;  // dLoss/d(A·H)
    matrix grad_input;       // dLoss/dH
  };

  // Appends a tensor after the last; returns the parameter count so far.
  std::size_t add_tensor(std::string name, std::int64_t rows, std::int64_t cols);
  void initialise(std::uint32_t seed, std::size_t count);
  dense_view<const float> weight(std::size_t offset, std::int64_t rows, std::int64_t cols) const;
  dense_view<float> weight_gradient(std::size_t offset, std::int64_t rows, std::int64_t cols);
  void check_blocks(std::span<const aggregation_block> blocks, dense_view<const float> features,
                    bool training) const;
  // out = layer l applied to x through `a`, before the activation.
  [[nodiscard]] aggregation& aggregator() const;
  void apply_layer(int l, const aggregation_block& block, dense_view<const float> x,
                   matrix& aggregated, matrix& out, gemm_stats* stats) const;
  // kernels::gemm, timed into *stats when it is given.
  void timed_gemm(kernels::gemm_op op_a, kernels::gemm_op op_b, dense_view<const float> a,
                  dense_view<const float> b, float beta, dense_view<float> c,
                  gemm_stats* stats) const;
  // Parameter gradients of layer l from dLoss/d(output) `grad`.
  void parameter_gradients(int l, dense_view<const float> x, dense_view<const float> grad);
  // dLoss/dx of layer l into buffers_[l].grad_input.
  void propagate_to_input(int l, dense_view<const float> grad);

  model_config config_;
  executor exec_;
  kernels::gemm_mode gemm_mode_;
  aggregation* aggregation_ = nullptr;  // nullptr: local_aggregation
  std::vector<parameter_tensor> tensors_;
  std::vector<layer_slots> slots_;
  buffer<float> parameters_;
  buffer<float> gradients_;
  std::vector<layer_buffers> buffers_;
  // Updated by const inference paths too, hence mutable (one thread uses a
  // model at a time).
  mutable gemm_stats gemm_stats_;
  // GEMMs queued on a device whose time is not read yet: the marks around
  // each and, if it was logged, its entry in gemm_stats_.log.
  struct pending_gemm {
    std::shared_ptr<void> begin;
    std::shared_ptr<void> end;
    std::size_t log_entry = 0;
    bool logged = false;
  };
  mutable std::vector<pending_gemm> pending_gemms_;

  // The embedding table's gradient from the last forward's input gradient.
  void embedding_gradient();
  // option_error unless every id is a row of the table and none repeats.
  void check_embedding_ids(std::span<const vertex_t> ids);

  // Where the embedding table starts in the flat vectors (it is the last
  // tensor, so the layers' tensors and their initial values are those of a
  // model without one).
  std::size_t embedding_offset_ = 0;
  matrix embedded_;                    // the embedding rows of the last forward_embedded
  std::vector<std::uint8_t> id_seen_;  // check_embedding_ids' marks, all 0 between calls

  // The last forward's inputs, for backward.
  std::span<const aggregation_block> blocks_;
  dense_view<const float> features_;
  std::span<const vertex_t> embedded_ids_;  // empty: the last forward took features
  bool dropped_ = false;
  bool input_gradient_ready_ = false;
};

// Logits for every node: forward_layer over the full-graph block, layer by
// layer.
[[nodiscard]] matrix predict_full_graph(const gnn_model& model, const aggregation_block& full,
                                        dense_view<const float> features);

}  // namespace bulkgnn::trainer
