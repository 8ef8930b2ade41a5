#include "bulkgnn/trainer/aggregation.hpp"

#include "bulkgnn/core/error.hpp"
#include "bulkgnn/kernels/spmm.hpp"

#include <fmt/format.h>

#include <string_view>

namespace bulkgnn::trainer {
namespace {

// The forward block with `edge_values` in place of its own values.
csr_view with_edge_values(const aggregation_block& block, std::span<const float> edge_values,
                          std::string_view function) {
  csr_view view = block.forward.view();
  // indices' length: a block in device memory has no host-readable indptr.
  BULKGNN_EXPECTS(edge_values.size() == view.indices.size(),
                  "{}: edge_values holds {} values for the block's {} entries", function,
                  edge_values.size(), view.indices.size());
  view.values = edge_values;
  return view;
}

[[noreturn]] void refuse_edge_values(std::string_view function) {
  throw option_error(fmt::format(
      "{}: per-edge values computed by a layer are aggregated by local_aggregation only; the "
      "distributed full-batch schemes do not move them between ranks",
      function));
}

}  // namespace

void aggregation::forward_with_edge_values(const executor&, int, const aggregation_block&,
                                           std::span<const float>, dense_view<const float>,
                                           dense_view<float>) {
  refuse_edge_values("aggregation::forward_with_edge_values");
}

void aggregation::backward_with_edge_values(const executor&, int, const aggregation_block&,
                                            std::span<const float>, dense_view<const float>,
                                            dense_view<const float>, dense_view<float>,
                                            std::span<float>) {
  refuse_edge_values("aggregation::backward_with_edge_values");
}

void local_aggregation::forward(const executor& exec, int, const aggregation_block& block,
                                dense_view<const float> x, dense_view<float> out) {
  kernels::spmm(exec, block.forward.view(), x, out);
}

void local_aggregation::backward(const executor& exec, int, const aggregation_block& block,
                                 dense_view<const float> grad_out, dense_view<float> grad_x) {
  kernels::spmm(exec, block.backward.view(), grad_out, grad_x);
}

void local_aggregation::forward_with_edge_values(const executor& exec, int,
                                                 const aggregation_block& block,
                                                 std::span<const float> edge_values,
                                                 dense_view<const float> x, dense_view<float> out) {
  kernels::spmm(exec, with_edge_values(block, edge_values, "forward_with_edge_values"), x, out);
}

void local_aggregation::backward_with_edge_values(
    const executor& exec, int, const aggregation_block& block, std::span<const float> edge_values,
    dense_view<const float> x, dense_view<const float> grad_out, dense_view<float> grad_x,
    std::span<float> grad_edge_values) {
  const csr_view weighted = with_edge_values(block, edge_values, "backward_with_edge_values");
  const csr_matrix transposed = kernels::transpose(exec, weighted);
  kernels::spmm(exec, transposed.view(), grad_out, grad_x);
  kernels::sddmm(exec, weighted, grad_out, x, grad_edge_values);
}

}  // namespace bulkgnn::trainer
