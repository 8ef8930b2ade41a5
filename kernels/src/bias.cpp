#include "bulkgnn/kernels/bias.hpp"

#include "../cpu/kernels.hpp"
#include "../cuda/kernels.hpp"
#include "../reference/kernels.hpp"
#include "front_door.hpp"

namespace bulkgnn::kernels {

void fill_rows_with_bias(const executor& exec, std::span<const float> bias, dense_view<float> out) {
  detail::check_dense(exec, out, "fill_rows_with_bias", "out");
  BULKGNN_EXPECTS(static_cast<std::int64_t>(bias.size()) == out.cols,
                  "fill_rows_with_bias: bias has {} entries but out has {} columns", bias.size(),
                  out.cols);
  detail::check_disjoint(bias, out.data, "fill_rows_with_bias", "bias", "out");
  (void)detail::span_reachable(exec, bias.data(), "fill_rows_with_bias", "bias");
  detail::dispatch(
      exec, "fill_rows_with_bias", [&] { reference::fill_rows_with_bias(bias, out); },
      [&] { cpu::fill_rows_with_bias(bias, out); },
      [&] { cuda::fill_rows_with_bias(exec, bias, out); });
}

void column_sums(const executor& exec, dense_view<const float> m, std::span<float> sums,
                 gemm_mode mode) {
  detail::check_dense(exec, m, "column_sums", "m");
  BULKGNN_EXPECTS(static_cast<std::int64_t>(sums.size()) == m.cols,
                  "column_sums: sums has {} entries but m has {} columns", sums.size(), m.cols);
  detail::check_disjoint(m.data, sums, "column_sums", "m", "sums");
  (void)detail::span_reachable(exec, sums.data(), "column_sums", "sums");
  detail::dispatch(
      exec, "column_sums", [&] { reference::column_sums(m, sums); },
      [&] { cpu::column_sums(m, sums); },
      [&] {
        if (mode == gemm_mode::fast)
          cuda::column_sums_cublas(exec, m, sums);
        else
          cuda::column_sums(exec, m, sums);
      });
}

}  // namespace bulkgnn::kernels
