#include "bulkgnn/kernels/rules/gemm.hpp"

#include "kernels.hpp"

namespace bulkgnn::kernels::reference {

// Element by element, each one fma chain read straight from the stored
// operands: the definition in gemm.hpp, literally.
void gemm(gemm_op op_a, gemm_op op_b, float alpha, dense_view<const float> a,
          dense_view<const float> b, float beta, dense_view<float> c) {
  const std::int64_t k = op_a == gemm_op::transposed ? a.rows : a.cols;
  // Where op(A)[i][0] and op(B)[0][j] are stored, and the step to p + 1.
  const std::int64_t a_stride = op_a == gemm_op::transposed ? a.cols : 1;
  const std::int64_t b_stride = op_b == gemm_op::transposed ? 1 : b.cols;
  for (std::int64_t i = 0; i < c.rows; ++i)
    for (std::int64_t j = 0; j < c.cols; ++j) {
      const float* a_row = a.data.data() + (op_a == gemm_op::transposed ? i : i * a.cols);
      const float* b_col = b.data.data() + (op_b == gemm_op::transposed ? j * b.cols : j);
      const float acc = rules::gemm_chain(a_row, a_stride, b_col, b_stride, k);
      float& out = c.data[static_cast<std::size_t>(i * c.cols + j)];
      out = rules::gemm_epilogue(acc, alpha, beta, out);
    }
}

}  // namespace bulkgnn::kernels::reference
