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

}  // namespace bulkgnn::kernels
