#include "bulkgnn/kernels/elementwise.hpp"

#include <cmath>

#include "../cpu/kernels.hpp"
#include "../cuda/kernels.hpp"
#include "../reference/kernels.hpp"
#include "front_door.hpp"

namespace bulkgnn::kernels {

void fill(const executor& exec, std::span<float> x, float value) {
  (void)detail::span_reachable(exec, x.data(), "fill", "x");
  detail::dispatch(
      exec, "fill", [&] { reference::fill(x, value); }, [&] { cpu::fill(x, value); },
      [&] { cuda::fill(exec, x, value); });
}

void scale(const executor& exec, std::span<float> x, float factor) {
  BULKGNN_EXPECTS(std::isfinite(factor), "scale: factor {} is not finite", factor);
  (void)detail::span_reachable(exec, x.data(), "scale", "x");
  detail::dispatch(
      exec, "scale", [&] { reference::scale(x, factor); }, [&] { cpu::scale(x, factor); },
      [&] { cuda::scale(exec, x, factor); });
}

void multiply(const executor& exec, dense_view<const float> a, dense_view<const float> b,
              dense_view<float> out) {
  constexpr std::string_view function = "multiply";
  detail::check_dense(exec, a, function, "a");
  detail::check_dense(exec, b, function, "b");
  detail::check_dense(exec, out, function, "out");
  BULKGNN_EXPECTS(a.rows == b.rows && a.cols == b.cols && a.rows == out.rows && a.cols == out.cols,
                  "{}: a is {}x{}, b {}x{} and out {}x{}; they must have one shape", function,
                  a.rows, a.cols, b.rows, b.cols, out.rows, out.cols);
  detail::check_disjoint(a.data, out.data, function, "a", "out");
  detail::check_disjoint(b.data, out.data, function, "b", "out");
  detail::dispatch(
      exec, function, [&] { reference::multiply(a.data, b.data, out.data); },
      [&] { cpu::multiply(a.data, b.data, out.data); },
      [&] { cuda::multiply(exec, a.data, b.data, out.data); });
}

}  // namespace bulkgnn::kernels
