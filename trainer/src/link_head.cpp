#include "bulkgnn/trainer/link_head.hpp"

#include "bulkgnn/core/error.hpp"
#include "bulkgnn/core/rng.hpp"
#include "bulkgnn/kernels/activation.hpp"
#include "bulkgnn/kernels/bias.hpp"
#include "bulkgnn/kernels/elementwise.hpp"
#include "bulkgnn/kernels/spmm.hpp"
#include "bulkgnn/trainer/placement.hpp"

#include <fmt/format.h>

#include <cmath>

namespace bulkgnn::trainer {

namespace {

using kernels::gemm_op;

// Rows [first, first + count) of m.
dense_view<float> row_range(dense_view<float> m, std::int64_t first, std::int64_t count) {
  return {count, m.cols,
          m.data.subspan(static_cast<std::size_t>(first * m.cols),
                         static_cast<std::size_t>(count * m.cols)),
          m.space};
}

// The rows × 2·pairs pattern whose row v holds column i where pair i starts
// at v and column pairs + i where it ends there, in column order: its product
// with [dLoss/dz_s; dLoss/dz_t] adds each pair's gradient to both rows.
csr_matrix incidence_of(node_pairs pairs, std::int64_t rows) {
  const auto count = pairs.size();
  const auto endpoint = [&](std::int64_t column) {
    return column < count ? pairs.source[static_cast<std::size_t>(column)]
                          : pairs.target[static_cast<std::size_t>(column - count)];
  };
  csr_matrix m;
  m.rows = rows;
  m.cols = 2 * count;
  std::vector<edge_t> indptr(static_cast<std::size_t>(rows) + 1, 0);
  for (std::int64_t c = 0; c < 2 * count; ++c) ++indptr[static_cast<std::size_t>(endpoint(c)) + 1];
  for (std::size_t r = 0; r < static_cast<std::size_t>(rows); ++r) indptr[r + 1] += indptr[r];
  std::vector<vertex_t> indices(static_cast<std::size_t>(2 * count));
  std::vector<edge_t> next(indptr.begin(), indptr.end() - 1);
  for (std::int64_t c = 0; c < 2 * count; ++c)
    indices[static_cast<std::size_t>(next[static_cast<std::size_t>(endpoint(c))]++)] =
        static_cast<vertex_t>(c);
  m.indptr = indptr;
  m.indices = indices;
  return m;
}

}  // namespace

link_head_kind parse_link_head(std::string_view name, std::string_view option) {
  if (name == "dot") return link_head_kind::dot;
  if (name == "mlp") return link_head_kind::mlp;
  throw option_error(fmt::format("{} must be dot or mlp; got '{}'", option, name));
}

std::string_view link_head_name(link_head_kind kind) {
  return kind == link_head_kind::dot ? "dot" : "mlp";
}

link_head::link_head(link_head_kind kind, std::int64_t width, std::uint32_t seed, executor exec,
                     kernels::gemm_mode gemm)
    : kind_(kind),
      width_(width),
      exec_(exec),
      gemm_mode_(gemm),
      parameters_(exec.memory()),
      gradients_(exec.memory()),
      ones_(width, 1, exec.memory()),
      source_rows_(0, 0, exec.memory()),
      target_rows_(0, 0, exec.memory()),
      product_(0, 0, exec.memory()),
      hidden_(0, 0, exec.memory()),
      scores_(0, 0, exec.memory()),
      grad_product_(0, 0, exec.memory()),
      grad_hidden_(0, 0, exec.memory()),
      grad_rows_(0, 0, exec.memory()),
      grad_z_(0, 0, exec.memory()) {
  BULKGNN_EXPECTS(width >= 1, "link_head: embedding width {} must be at least 1", width);
  kernels::fill(exec_, ones_.data(), 1.0f);
  if (kind_ == link_head_kind::mlp) {
    std::size_t offset = 0;
    for (const auto& [name, rows, cols] :
         {std::tuple{"predictor.lins.0.weight", width, width},
          std::tuple{"predictor.lins.0.bias", std::int64_t{1}, width},
          std::tuple{"predictor.lins.1.weight", width, std::int64_t{1}},
          std::tuple{"predictor.lins.1.bias", std::int64_t{1}, std::int64_t{1}}}) {
      tensors_.push_back({name, rows, cols, offset});
      offset += tensors_.back().size();
    }
  }
  std::vector<float> initial(tensors_.empty() ? 0
                                              : tensors_.back().offset + tensors_.back().size());
  const double bound =
      1.0 / std::sqrt(static_cast<double>(width));  // both layers take width inputs
  for (std::size_t i = 0; i < tensors_.size(); ++i) {
    philox_stream stream(
        rng_key{seed, 0xFFFFFFFEu, no_minibatch, static_cast<std::uint32_t>(i), 0});
    for (float& v : std::span(initial).subspan(tensors_[i].offset, tensors_[i].size()))
      v = static_cast<float>((2.0 * stream.uniform_open01() - 1.0) * bound);
  }
  parameters_ = copy_to(std::span<const float>(initial), exec_.memory());
  gradients_ = buffer<float>(initial.size(), exec_.memory());
  kernels::fill(exec_, gradients_, 0.0f);
}

dense_view<const float> link_head::tensor(std::size_t i) const {
  const auto& t = tensors_[i];
  return {t.rows, t.cols, parameters().subspan(t.offset, t.size()), parameters_.space()};
}

dense_view<float> link_head::tensor_gradient(std::size_t i) {
  const auto& t = tensors_[i];
  return {t.rows, t.cols, std::span(gradients_).subspan(t.offset, t.size()), gradients_.space()};
}

void link_head::gemm(gemm_op op_a, gemm_op op_b, dense_view<const float> a,
                     dense_view<const float> b, float beta, dense_view<float> c) const {
  kernels::gemm(exec_, op_a, op_b, 1.0f, a, b, beta, c, gemm_mode_);
}

std::span<const float> link_head::forward(dense_view<const float> z, node_pairs pairs) {
  BULKGNN_EXPECTS(z.cols == width_, "link_head::forward: embeddings have {} columns, the head {}",
                  z.cols, width_);
  BULKGNN_EXPECTS(pairs.source.size() == pairs.target.size(),
                  "link_head::forward: {} sources for {} targets", pairs.source.size(),
                  pairs.target.size());
  z_ = z;
  pairs_ = pairs;
  const auto count = pairs.size();
  source_rows_.reshape(count, width_);
  target_rows_.reshape(count, width_);
  // A device executor's copies: its stream frees them after the gathers.
  const placed<vertex_t> sources(exec_, pairs.source, memory_space::host);
  const placed<vertex_t> targets(exec_, pairs.target, memory_space::host);
  kernels::gather_dense_rows(exec_, z, sources.span(), source_rows_.view());
  kernels::gather_dense_rows(exec_, z, targets.span(), target_rows_.view());
  product_.reshape(count, width_);
  kernels::multiply(exec_, source_rows_.view(), target_rows_.view(), product_.view());
  scores_.reshape(count, 1);
  if (kind_ == link_head_kind::dot) {
    gemm(gemm_op::plain, gemm_op::plain, product_.view(), ones_.view(), 0.0f, scores_.view());
  } else {
    hidden_.reshape(count, width_);
    kernels::fill_rows_with_bias(exec_, tensor(1).data, hidden_.view());
    gemm(gemm_op::plain, gemm_op::plain, product_.view(), tensor(0), 1.0f, hidden_.view());
    kernels::relu_dropout(exec_, hidden_.view(), 0.0f, std::nullopt, 0);
    kernels::fill_rows_with_bias(exec_, tensor(3).data, scores_.view());
    gemm(gemm_op::plain, gemm_op::plain, hidden_.view(), tensor(2), 1.0f, scores_.view());
  }
  return scores_.data();
}

void link_head::product_gradient(dense_view<const float> grad_scores) {
  const auto count = grad_scores.rows;
  grad_product_.reshape(count, width_);
  if (kind_ == link_head_kind::dot) {
    gemm(gemm_op::plain, gemm_op::transposed, grad_scores, ones_.view(), 0.0f,
         grad_product_.view());
    return;
  }
  gemm(gemm_op::transposed, gemm_op::plain, hidden_.view(), grad_scores, 0.0f, tensor_gradient(2));
  kernels::column_sums(exec_, grad_scores, tensor_gradient(3).data, gemm_mode_);
  grad_hidden_.reshape(count, width_);
  gemm(gemm_op::plain, gemm_op::transposed, grad_scores, tensor(2), 0.0f, grad_hidden_.view());
  kernels::relu_dropout_backward(exec_, hidden_.view(), 0.0f, false, grad_hidden_.view());
  gemm(gemm_op::transposed, gemm_op::plain, product_.view(), grad_hidden_.view(), 0.0f,
       tensor_gradient(0));
  kernels::column_sums(exec_, grad_hidden_.view(), tensor_gradient(1).data, gemm_mode_);
  gemm(gemm_op::plain, gemm_op::transposed, grad_hidden_.view(), tensor(0), 0.0f,
       grad_product_.view());
}

dense_view<const float> link_head::backward(std::span<const float> grad_scores) {
  const auto count = pairs_.size();
  BULKGNN_EXPECTS(static_cast<std::int64_t>(grad_scores.size()) == count && scores_.rows() == count,
                  "link_head::backward: {} score gradients for the last forward's {} pairs",
                  grad_scores.size(), scores_.rows());
  product_gradient({count, 1, grad_scores, scores_.space()});
  grad_rows_.reshape(2 * count, width_);
  kernels::multiply(exec_, grad_product_.view(), target_rows_.view(),
                    row_range(grad_rows_.view(), 0, count));
  kernels::multiply(exec_, grad_product_.view(), source_rows_.view(),
                    row_range(grad_rows_.view(), count, count));
  auto incidence = incidence_of(pairs_, z_.rows);
  if (needs_placing(exec_, memory_space::host)) incidence = copy_for(exec_, incidence.view());
  grad_z_.reshape(z_.rows, width_);
  kernels::spmm(exec_, incidence.view(), grad_rows_.view(), grad_z_.view());
  return grad_z_.view();
}

std::vector<float> link_head::parameters_on_host() const {
  return copy_to_host(parameters_).to_vector();
}

void link_head::set_parameters(std::span<const float> values) {
  BULKGNN_EXPECTS(values.size() == parameters_.size(),
                  "link_head::set_parameters: {} values for {} parameters", values.size(),
                  parameters_.size());
  if (!values.empty()) exec_.memory().copy(parameters_.data(), values.data(), values.size_bytes());
}

}  // namespace bulkgnn::trainer
