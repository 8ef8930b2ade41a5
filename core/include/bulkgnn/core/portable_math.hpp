#pragma once

#include "bulkgnn/core/host_device.hpp"

#include <math.h>

// A natural logarithm that gives the same bits on every CPU and on the GPU.
// glibc's log and CUDA's log are each accurate to about an ulp, but they
// round differently now and then, and a weighted draw orders keys E/w with
// E = -log(u): one differing bit could swap two nearly tied entries, so the
// GPU would draw another sample than the CPU. This one uses only +, -, ×
// and ÷ rounded to nearest, never fused (device code calls the _rn
// intrinsics, which nvcc never contracts; the host build of
// core/src/portable_log.cpp is compiled with -ffp-contract=off), so the
// bits depend on IEEE 754 alone. Accurate to a few ulp, which is far below
// any statistical effect.
namespace bulkgnn {
namespace detail {

BULKGNN_HOST_DEVICE inline double mul_rn(double a, double b) {
#if defined(__CUDA_ARCH__)
  return __dmul_rn(a, b);
#else
  return a * b;
#endif
}

BULKGNN_HOST_DEVICE inline double add_rn(double a, double b) {
#if defined(__CUDA_ARCH__)
  return __dadd_rn(a, b);
#else
  return a + b;
#endif
}

// x = f · 2^k with f in [√½, √2); then log x = k·ln 2 + 2·atanh(s) with
// s = (f - 1) / (f + 1), |s| < 0.172, whose odd series converges to double
// precision in 11 terms. ln 2 is split so that k·ln2_hi is exact.
BULKGNN_HOST_DEVICE inline double portable_log_body(double x) {
  int k = 0;
  double f = frexp(x, &k);
  if (f < 0.70710678118654752440) {
    f = mul_rn(f, 2.0);
    --k;
  }
  const double s = (f - 1.0) / add_rn(f, 1.0);
  const double z = mul_rn(s, s);
  double series = 1.0 / 23.0;
  series = add_rn(1.0 / 21.0, mul_rn(z, series));
  series = add_rn(1.0 / 19.0, mul_rn(z, series));
  series = add_rn(1.0 / 17.0, mul_rn(z, series));
  series = add_rn(1.0 / 15.0, mul_rn(z, series));
  series = add_rn(1.0 / 13.0, mul_rn(z, series));
  series = add_rn(1.0 / 11.0, mul_rn(z, series));
  series = add_rn(1.0 / 9.0, mul_rn(z, series));
  series = add_rn(1.0 / 7.0, mul_rn(z, series));
  series = add_rn(1.0 / 5.0, mul_rn(z, series));
  series = add_rn(1.0 / 3.0, mul_rn(z, series));
  const double two_s = mul_rn(2.0, s);
  const double log_f = add_rn(two_s, mul_rn(two_s, mul_rn(z, series)));
  constexpr double ln2_hi = 6.93147180369123816490e-01;  // 0x3FE62E42FEE00000
  constexpr double ln2_lo = 1.90821492927058770002e-10;
  const double exponent = static_cast<double>(k);
  return add_rn(mul_rn(exponent, ln2_hi), add_rn(mul_rn(exponent, ln2_lo), log_f));
}

}  // namespace detail

#if defined(__CUDA_ARCH__)
__device__ inline double portable_log(double x) { return detail::portable_log_body(x); }
#else
// The natural logarithm of a positive, finite, normal x (the uniform
// variates of philox_stream are all of these).
double portable_log(double x);
#endif

}  // namespace bulkgnn
