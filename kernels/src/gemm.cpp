#include "bulkgnn/kernels/gemm.hpp"

#include "bulkgnn/core/error.hpp"

#include <fmt/format.h>

#include "../cpu/kernels.hpp"
#include "../cuda/kernels.hpp"
#include "../reference/kernels.hpp"
#include "front_door.hpp"

namespace bulkgnn::kernels {
namespace {

struct op_shape {
  std::int64_t rows;
  std::int64_t cols;
};

op_shape shape_of(dense_view<const float> m, gemm_op op) {
  return op == gemm_op::transposed ? op_shape{m.cols, m.rows} : op_shape{m.rows, m.cols};
}

}  // namespace

std::string_view gemm_mode_name(gemm_mode mode) {
  return mode == gemm_mode::fast ? "fast" : "exact";
}

gemm_mode default_gemm_mode(const executor& exec) {
  return exec.kind() == backend::cuda ? gemm_mode::fast : gemm_mode::exact;
}

gemm_mode parse_gemm_mode(std::string_view name, std::string_view option) {
  if (name == "exact") return gemm_mode::exact;
  if (name == "fast") return gemm_mode::fast;
  throw error(fmt::format("{} {}: expected exact or fast", option, name));
}

void gemm(const executor& exec, gemm_op op_a, gemm_op op_b, float alpha, dense_view<const float> a,
          dense_view<const float> b, float beta, dense_view<float> c, gemm_mode mode) {
  detail::check_dense(exec, a, "gemm", "a");
  detail::check_dense(exec, b, "gemm", "b");
  detail::check_dense(exec, c, "gemm", "c");
  const auto shape_a = shape_of(a, op_a);
  const auto shape_b = shape_of(b, op_b);
  BULKGNN_EXPECTS(shape_a.cols == shape_b.rows && c.rows == shape_a.rows && c.cols == shape_b.cols,
                  "gemm: op(A) is {}x{}, op(B) is {}x{}, C is {}x{}", shape_a.rows, shape_a.cols,
                  shape_b.rows, shape_b.cols, c.rows, c.cols);
  detail::check_disjoint(a.data, c.data, "gemm", "a", "c");
  detail::check_disjoint(b.data, c.data, "gemm", "b", "c");
  detail::dispatch(
      exec, "gemm", [&] { reference::gemm(op_a, op_b, alpha, a, b, beta, c); },
      [&] { cpu::gemm(op_a, op_b, alpha, a, b, beta, c); },
      [&] {
        if (mode == gemm_mode::fast)
          cuda::gemm_cublas(exec, op_a, op_b, alpha, a, b, beta, c);
        else
          cuda::gemm(exec, op_a, op_b, alpha, a, b, beta, c);
      });
}

std::string_view cpu_gemm_kernel_name() { return cpu::gemm_kernel_name(); }

}  // namespace bulkgnn::kernels
