#include "bulkgnn/trainer/model.hpp"

#include "bulkgnn/core/error.hpp"
#include "bulkgnn/core/rng.hpp"
#include "bulkgnn/core/timer.hpp"
#include "bulkgnn/kernels/bias.hpp"
#include "bulkgnn/kernels/elementwise.hpp"
#include "bulkgnn/kernels/spmm.hpp"
#include "bulkgnn/trainer/layer_table.hpp"

#include <algorithm>
#include <cmath>
#include <vector>

namespace bulkgnn::trainer {

namespace {

bool has_root_weight(const model_config& config) {
  return find_layer(config.kind).has_root_weight();
}

dense_view<const float> first_rows(dense_view<const float> m, std::int64_t rows) {
  return {rows, m.cols, m.data.first(static_cast<std::size_t>(rows * m.cols)), m.space};
}

dense_view<float> first_rows(dense_view<float> m, std::int64_t rows) {
  return {rows, m.cols, m.data.first(static_cast<std::size_t>(rows * m.cols)), m.space};
}

using kernels::gemm_op;

}  // namespace

void validate(const model_config& config) {
  BULKGNN_EXPECTS(config.layers >= 1, "model_config.layers: {} must be at least 1", config.layers);
  BULKGNN_EXPECTS(config.hidden >= 1, "model_config.hidden: {} must be at least 1", config.hidden);
  // Dropout resolves p to 1/65536 (layers.cpp); p that rounds to 1 would drop
  // everything.
  BULKGNN_EXPECTS(config.dropout >= 0.0f && config.dropout < 1.0f &&
                      std::lround(std::ldexp(static_cast<double>(config.dropout), 16)) < 65536,
                  "model_config.dropout: {} is outside [0, 1)", config.dropout);
  BULKGNN_EXPECTS(config.in_features >= 1, "model: the features have {} columns, need at least 1",
                  config.in_features);
  BULKGNN_EXPECTS(config.num_classes >= 1, "model: {} classes, need at least 1",
                  config.num_classes);
  BULKGNN_EXPECTS(config.embedding_rows >= 0, "model_config.embedding_rows: {} is negative",
                  config.embedding_rows);
}

gnn_model::gnn_model(const model_config& config, std::uint32_t seed, executor exec)
    : config_(config),
      exec_(exec),
      gemm_mode_(config.gemm.value_or(kernels::default_gemm_mode(exec))),
      parameters_(exec.memory()),
      gradients_(exec.memory()) {
  validate(config_);
  const auto& layer = find_layer(config_.kind);
  std::size_t count = 0;
  for (int l = 0; l < config_.layers; ++l) {
    layer_slots slot;
    slot.in = l == 0 ? config_.in_features : config_.hidden;
    slot.out = l + 1 == config_.layers ? config_.num_classes : config_.hidden;
    const std::string prefix = fmt::format("convs.{}.", l);
    slot.w_neigh = count;
    count = add_tensor(prefix + std::string(layer.weight_name), slot.in, slot.out);
    if (layer.has_root_weight()) {
      slot.w_self = count;
      count = add_tensor(prefix + std::string(layer.root_weight_name), slot.in, slot.out);
    }
    slot.bias = count;
    count = add_tensor(prefix + std::string(layer.bias_name), 1, slot.out);
    slots_.push_back(slot);
  }
  if (config_.embedding_rows > 0) {
    embedding_offset_ = count;
    count = add_tensor("embedding.weight", config_.embedding_rows, config_.in_features);
    embedded_ = matrix(0, 0, exec_.memory());
  }
  gradients_ = buffer<float>(count, exec_.memory());
  kernels::fill(exec_, gradients_, 0.0f);
  for (std::size_t l = 0; l < slots_.size(); ++l) buffers_.emplace_back(exec_.memory());
  initialise(seed, count);
}

std::size_t gnn_model::add_tensor(std::string name, std::int64_t rows, std::int64_t cols) {
  const std::size_t offset = tensors_.empty() ? 0 : tensors_.back().offset + tensors_.back().size();
  tensors_.push_back({std::move(name), rows, cols, offset});
  return offset + tensors_.back().size();
}

// Drawn on the host, so every back end starts from the same weights. The
// embedding table is N(0, 1), as torch.nn.Embedding's.
void gnn_model::initialise(std::uint32_t seed, std::size_t count) {
  std::vector<float> initial(count);
  const std::size_t per_layer = has_root_weight(config_) ? 3 : 2;
  for (std::size_t i = 0; i < tensors_.size(); ++i) {
    philox_stream stream(
        rng_key{seed, 0xFFFFFFFFu, no_minibatch, static_cast<std::uint32_t>(i), 0});
    const auto values = std::span(initial).subspan(tensors_[i].offset, tensors_[i].size());
    if (config_.embedding_rows > 0 && i + 1 == tensors_.size()) {
      for (float& v : values) v = static_cast<float>(stream.normal());
      continue;
    }
    const double bound = 1.0 / std::sqrt(static_cast<double>(slots_[i / per_layer].in));
    for (float& v : values) v = static_cast<float>((2.0 * stream.uniform_open01() - 1.0) * bound);
  }
  parameters_ = copy_to(std::span<const float>(initial), exec_.memory());
}

gnn_model::layer_buffers::layer_buffers(memory_resource& memory)
    : aggregated(0, 0, memory),
      output(0, 0, memory),
      grad_aggregated(0, 0, memory),
      grad_input(0, 0, memory) {}

std::vector<float> gnn_model::parameters_on_host() const {
  return copy_to_host(parameters_).to_vector();
}

void gnn_model::set_parameters(std::span<const float> values) {
  BULKGNN_EXPECTS(values.size() == parameters_.size(),
                  "gnn_model::set_parameters: {} values for {} parameters", values.size(),
                  parameters_.size());
  exec_.memory().copy(parameters_.data(), values.data(), values.size_bytes());
}

std::vector<float> gnn_model::gradients_on_host() const {
  return copy_to_host(gradients_).to_vector();
}

dense_view<const float> gnn_model::weight(std::size_t offset, std::int64_t rows,
                                          std::int64_t cols) const {
  return {rows, cols, parameters().subspan(offset, static_cast<std::size_t>(rows * cols)),
          parameters_.space()};
}

dense_view<float> gnn_model::weight_gradient(std::size_t offset, std::int64_t rows,
                                             std::int64_t cols) {
  return {rows, cols, std::span(gradients_).subspan(offset, static_cast<std::size_t>(rows * cols)),
          gradients_.space()};
}

void gnn_model::check_blocks(std::span<const aggregation_block> blocks,
                             dense_view<const float> features, bool training) const {
  BULKGNN_EXPECTS(static_cast<int>(blocks.size()) == config_.layers,
                  "gnn_model::forward: {} blocks for a {}-layer model", blocks.size(),
                  config_.layers);
  BULKGNN_EXPECTS(
      features.cols == config_.in_features && features.rows == blocks.front().forward.cols &&
          static_cast<std::int64_t>(features.data.size()) >= features.rows * features.cols,
      "gnn_model::forward: features are {}x{}, expected {}x{} (block 0's sources × "
      "in_features)",
      features.rows, features.cols, blocks.front().forward.cols, config_.in_features);
  for (std::size_t l = 0; l < blocks.size(); ++l) {
    const auto& block = blocks[l];
    BULKGNN_EXPECTS(block.forward.rows <= block.forward.cols,
                    "gnn_model::forward: block {} has {} destinations but {} sources", l,
                    block.forward.rows, block.forward.cols);
    BULKGNN_EXPECTS(l == 0 || block.forward.cols == blocks[l - 1].forward.rows,
                    "gnn_model::forward: block {} has {} sources but block {} has {} destinations",
                    l, block.forward.cols, l - 1, blocks[l - 1].forward.rows);
    BULKGNN_EXPECTS(!training || (block.backward.rows == block.forward.cols &&
                                  block.backward.cols == block.forward.rows),
                    "gnn_model::backward: block {} was not built with_backward", l);
  }
}

dense_view<const float> gnn_model::forward(std::span<const aggregation_block> blocks,
                                           dense_view<const float> features,
                                           std::optional<kernels::dropout_key> dropout) {
  check_blocks(blocks, features, false);
  blocks_ = blocks;
  features_ = features;
  embedded_ids_ = {};
  dropped_ = dropout.has_value() && config_.dropout > 0.0f;
  input_gradient_ready_ = false;
  dense_view<const float> x = features;
  for (int l = 0; l < config_.layers; ++l) {
    auto& buffers = buffers_[l];
    apply_layer(l, blocks[l], x, buffers.aggregated, buffers.output, &gemm_stats_);
    if (l + 1 < config_.layers)
      kernels::relu_dropout(exec_, buffers.output.view(), config_.dropout, dropout, l);
    x = buffers.output.view();
  }
  return x;
}

dense_view<const float> gnn_model::forward_embedded(std::span<const aggregation_block> blocks,
                                                    std::span<const vertex_t> input_ids,
                                                    std::optional<kernels::dropout_key> dropout) {
  BULKGNN_EXPECTS(config_.embedding_rows > 0,
                  "gnn_model::forward_embedded: the model has no embedding table "
                  "(model_config.embedding_rows is 0)");
  BULKGNN_EXPECTS(
      !blocks.empty() && static_cast<std::int64_t>(input_ids.size()) == blocks.front().forward.cols,
      "gnn_model::forward_embedded: {} input ids for block 0's {} sources", input_ids.size(),
      blocks.empty() ? 0 : blocks.front().forward.cols);
  // Ids on a GPU are not read back: there they are a sampled minibatch's
  // input vertices, distinct by construction, and the kernels check their range.
  if (host_accessible(exec_.memory().space())) check_embedding_ids(input_ids);
  embedded_.reshape(static_cast<std::int64_t>(input_ids.size()), config_.in_features);
  kernels::gather_dense_rows(exec_, embedding(), input_ids, embedded_.view());
  const auto logits = forward(blocks, embedded_.view(), dropout);
  embedded_ids_ = input_ids;
  return logits;
}

// Rows of the table, each once: the gradient's scatter writes each row from
// one thread, so a repeated id would make it depend on the thread count.
// Linear in the ids: a mark per row, cleared again on the way out.
void gnn_model::check_embedding_ids(std::span<const vertex_t> ids) {
  id_seen_.resize(static_cast<std::size_t>(config_.embedding_rows));
  std::size_t marked = 0;
  const auto clear = [&] {
    for (std::size_t i = 0; i < marked; ++i) id_seen_[static_cast<std::size_t>(ids[i])] = 0;
  };
  for (; marked < ids.size(); ++marked) {
    const vertex_t id = ids[marked];
    if (id < 0 || id >= config_.embedding_rows || id_seen_[static_cast<std::size_t>(id)] != 0) {
      clear();
      BULKGNN_EXPECTS(id >= 0 && id < config_.embedding_rows,
                      "gnn_model::forward_embedded: input id {} is outside [0, {})", id,
                      config_.embedding_rows);
      throw option_error(
          fmt::format("gnn_model::forward_embedded: input id {} appears more than once", id));
    }
    id_seen_[static_cast<std::size_t>(id)] = 1;
  }
  clear();
}

dense_view<const float> gnn_model::embedding() const {
  return weight(embedding_offset_, config_.embedding_rows, config_.in_features);
}

void gnn_model::embedding_gradient() {
  const auto table =
      weight_gradient(embedding_offset_, config_.embedding_rows, config_.in_features);
  kernels::fill(exec_, table.data, 0.0f);
  if (!embedded_ids_.empty())
    kernels::scatter_dense_rows(exec_, input_gradient(), embedded_ids_, 1.0f, table);
}

aggregation& gnn_model::aggregator() const {
  // Stateless, so one instance serves every model (and copies of a model).
  static local_aggregation local;
  return aggregation_ != nullptr ? *aggregation_ : local;
}

void gnn_model::apply_layer(int l, const aggregation_block& block, dense_view<const float> x,
                            matrix& aggregated, matrix& out, gemm_stats* stats) const {
  const auto& slot = slots_[l];
  const csr_view a = block.forward.view();
  aggregated.reshape(a.rows, x.cols);
  aggregator().forward(exec_, l, block, x, aggregated.view());
  out.reshape(a.rows, slot.out);
  kernels::fill_rows_with_bias(exec_, parameters().subspan(slot.bias, slot.out), out.view());
  timed_gemm(gemm_op::plain, gemm_op::plain, aggregated.view(),
             weight(slot.w_neigh, slot.in, slot.out), 1.0f, out.view(), stats);
  if (has_root_weight(config_))
    timed_gemm(gemm_op::plain, gemm_op::plain, first_rows(x, a.rows),
               weight(slot.w_self, slot.in, slot.out), 1.0f, out.view(), stats);
}

void gnn_model::timed_gemm(gemm_op op_a, gemm_op op_b, dense_view<const float> a,
                           dense_view<const float> b, float beta, dense_view<float> c,
                           gemm_stats* stats) const {
  auto* device = exec_.device();
  const bool timed = stats != nullptr && !c.empty();
  std::shared_ptr<void> begin = timed && device != nullptr ? device->mark() : nullptr;
  const stopwatch watch;
  kernels::gemm(exec_, op_a, op_b, 1.0f, a, b, beta, c, gemm_mode_);
  if (!timed) return;
  const double host_seconds = watch.seconds();
  const std::int64_t k = op_a == gemm_op::transposed ? a.rows : a.cols;
  stats->flops +=
      2.0 * static_cast<double>(c.rows) * static_cast<double>(c.cols) * static_cast<double>(k);
  ++stats->calls;
  if (device == nullptr) {
    stats->seconds += host_seconds;
    if (stats->log != nullptr) stats->log->push_back({op_a, op_b, c.rows, c.cols, k, host_seconds});
    return;
  }
  pending_gemm pending{.begin = std::move(begin), .end = device->mark()};
  if (stats->log != nullptr) {
    pending.log_entry = stats->log->size();
    pending.logged = true;
    stats->log->push_back({op_a, op_b, c.rows, c.cols, k, 0.0});
  }
  pending_gemms_.push_back(std::move(pending));
}

const gemm_stats& gnn_model::gemm() const {
  for (const auto& pending : pending_gemms_) {
    const double seconds = exec_.device()->seconds_between(pending.begin, pending.end);
    gemm_stats_.seconds += seconds;
    if (pending.logged && gemm_stats_.log != nullptr)
      (*gemm_stats_.log)[pending.log_entry].seconds = seconds;
  }
  pending_gemms_.clear();
  return gemm_stats_;
}

void gnn_model::reset_gemm_stats() {
  pending_gemms_.clear();
  gemm_stats_ = {.log = gemm_stats_.log};
}

void gnn_model::backward(dense_view<const float> grad_logits, bool with_input_gradient) {
  BULKGNN_EXPECTS(!blocks_.empty(), "gnn_model::backward: no forward to differentiate");
  check_blocks(blocks_, features_, true);
  const auto& logits = buffers_.back().output;
  BULKGNN_EXPECTS(grad_logits.rows == logits.rows() && grad_logits.cols == logits.cols(),
                  "gnn_model::backward: gradient is {}x{} but the logits are {}x{}",
                  grad_logits.rows, grad_logits.cols, logits.rows(), logits.cols());
  with_input_gradient = with_input_gradient || !embedded_ids_.empty();
  dense_view<const float> grad = grad_logits;
  for (int l = config_.layers - 1; l >= 0; --l) {
    const auto x = l == 0 ? features_ : buffers_[l - 1].output.view();
    parameter_gradients(l, x, grad);
    if (l == 0 && !with_input_gradient) break;
    propagate_to_input(l, grad);
    auto& grad_input = buffers_[l].grad_input;
    if (l > 0)
      kernels::relu_dropout_backward(exec_, buffers_[l - 1].output.view(), config_.dropout,
                                     dropped_, grad_input.view());
    grad = grad_input.view();
  }
  input_gradient_ready_ = with_input_gradient;
  if (config_.embedding_rows > 0) embedding_gradient();
}

void gnn_model::parameter_gradients(int l, dense_view<const float> x,
                                    dense_view<const float> grad) {
  const auto& slot = slots_[l];
  timed_gemm(gemm_op::transposed, gemm_op::plain, buffers_[l].aggregated.view(), grad, 0.0f,
             weight_gradient(slot.w_neigh, slot.in, slot.out), &gemm_stats_);
  if (has_root_weight(config_))
    timed_gemm(gemm_op::transposed, gemm_op::plain, first_rows(x, grad.rows), grad, 0.0f,
               weight_gradient(slot.w_self, slot.in, slot.out), &gemm_stats_);
  kernels::column_sums(exec_, grad, std::span(gradients_).subspan(slot.bias, slot.out), gemm_mode_);
}

void gnn_model::propagate_to_input(int l, dense_view<const float> grad) {
  const auto& slot = slots_[l];
  const auto& block = blocks_[l];
  auto& buffers = buffers_[l];
  buffers.grad_aggregated.reshape(grad.rows, slot.in);
  timed_gemm(gemm_op::plain, gemm_op::transposed, grad, weight(slot.w_neigh, slot.in, slot.out),
             0.0f, buffers.grad_aggregated.view(), &gemm_stats_);
  buffers.grad_input.reshape(block.forward.cols, slot.in);
  aggregator().backward(exec_, l, block, buffers.grad_aggregated.view(), buffers.grad_input.view());
  if (has_root_weight(config_))
    timed_gemm(gemm_op::plain, gemm_op::transposed, grad, weight(slot.w_self, slot.in, slot.out),
               1.0f, first_rows(buffers.grad_input.view(), grad.rows), &gemm_stats_);
}

dense_view<const float> gnn_model::input_gradient() const {
  BULKGNN_EXPECTS(input_gradient_ready_,
                  "gnn_model::input_gradient: the last backward ran without with_input_gradient");
  return buffers_.front().grad_input.view();
}

matrix gnn_model::forward_layer(int l, const aggregation_block& block,
                                dense_view<const float> x) const {
  BULKGNN_EXPECTS(l >= 0 && l < config_.layers, "gnn_model::forward_layer: layer {} of {}", l,
                  config_.layers);
  const auto& a = block.forward;
  BULKGNN_EXPECTS(x.rows == a.cols && x.cols == slots_[l].in && a.rows <= a.cols,
                  "gnn_model::forward_layer: layer {} takes {}x{} input through a {}x{} block, "
                  "got {}x{}",
                  l, a.cols, slots_[l].in, a.rows, a.cols, x.rows, x.cols);
  matrix aggregated(0, 0, exec_.memory());
  matrix out(0, 0, exec_.memory());
  apply_layer(l, block, x, aggregated, out, nullptr);
  if (l + 1 < config_.layers) kernels::relu_dropout(exec_, out.view(), 0.0f, std::nullopt, l);
  return out;
}

matrix predict_full_graph(const gnn_model& model, const aggregation_block& full,
                          dense_view<const float> features) {
  BULKGNN_EXPECTS(full.forward.rows == full.forward.cols,
                  "predict_full_graph: the block is {}x{}, not the whole graph", full.forward.rows,
                  full.forward.cols);
  matrix current;
  dense_view<const float> x = features;
  for (int l = 0; l < model.config().layers; ++l) {
    current = model.forward_layer(l, full, x);
    x = current.view();
  }
  return current;
}

}  // namespace bulkgnn::trainer
