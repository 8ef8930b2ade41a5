#include "bulkgnn/trainer/aggregation.hpp"

#include "bulkgnn/kernels/spmm.hpp"

namespace bulkgnn::trainer {

void local_aggregation::forward(const executor& exec, int, const aggregation_block& block,
                                dense_view<const float> x, dense_view<float> out) {
  kernels::spmm(exec, block.forward.view(), x, out);
}

void local_aggregation::backward(const executor& exec, int, const aggregation_block& block,
                                 dense_view<const float> grad_out, dense_view<float> grad_x) {
  kernels::spmm(exec, block.backward.view(), grad_out, grad_x);
}

}  // namespace bulkgnn::trainer
