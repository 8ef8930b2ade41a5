#pragma once

#include "bulkgnn/core/host_device.hpp"

#include <math.h>

// A natural logarithm and exponential that give the same bits on every CPU
// and on the GPU. glibc's and CUDA's log and exp are each accurate to about
// an ulp, but they round differently now and then: a weighted draw orders
// keys E/w with E = -log(u), where one differing bit could swap two nearly
// tied entries, so the GPU would draw another sample than the CPU; and
// softmax cross-entropy would give another loss and, now and then, another
// gradient bit. These use only +, -, ×, ÷, frexp, floor and ldexp, rounded
// to nearest, never fused (device code calls the _rn intrinsics, which nvcc
// never contracts; the host build of core/src/portable_math.cpp is compiled
// with -ffp-contract=off), so the bits depend on IEEE 754 alone. Accurate to
// a few ulp, far below any statistical or training effect.
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

// x = k·ln 2 + r with k = round(x / ln 2) and |r| <= ½ ln 2 (ln 2 split so
// that k·ln2_hi is exact); e^r by its Taylor series to r^13/13!, whose
// remainder is below 2^-55 there; then 2^k by ldexp, exact for the normal
// results of x >= -700. Below that e^x (< 1e-304) is taken as 0.
BULKGNN_HOST_DEVICE inline double portable_exp_body(double x) {
  if (x != x) return x;
  if (x < -700.0) return 0.0;
  if (x > 709.0) return HUGE_VAL;
  constexpr double inverse_ln2 = 1.44269504088896338700e+00;
  constexpr double ln2_hi = 6.93147180369123816490e-01;  // 0x3FE62E42FEE00000
  constexpr double ln2_lo = 1.90821492927058770002e-10;
  const double k = floor(add_rn(mul_rn(x, inverse_ln2), 0.5));
  const double r = add_rn(add_rn(x, -mul_rn(k, ln2_hi)), -mul_rn(k, ln2_lo));
  double series = 1.0 / 6227020800.0;  // 1/13!
  series = add_rn(1.0 / 479001600.0, mul_rn(r, series));
  series = add_rn(1.0 / 39916800.0, mul_rn(r, series));
  series = add_rn(1.0 / 3628800.0, mul_rn(r, series));
  series = add_rn(1.0 / 362880.0, mul_rn(r, series));
  series = add_rn(1.0 / 40320.0, mul_rn(r, series));
  series = add_rn(1.0 / 5040.0, mul_rn(r, series));
  series = add_rn(1.0 / 720.0, mul_rn(r, series));
  series = add_rn(1.0 / 120.0, mul_rn(r, series));
  series = add_rn(1.0 / 24.0, mul_rn(r, series));
  series = add_rn(1.0 / 6.0, mul_rn(r, series));
  series = add_rn(0.5, mul_rn(r, series));
  series = add_rn(1.0, mul_rn(r, series));
  series = add_rn(1.0, mul_rn(r, series));
  return ldexp(series, static_cast<int>(k));
}

}  // namespace detail

#if defined(__CUDA_ARCH__)
__device__ inline double portable_log(double x) { return detail::portable_log_body(x); }
__device__ inline double portable_exp(double x) { return detail::portable_exp_body(x); }
#else
// The natural logarithm of a positive, finite, normal x (the uniform
// variates of philox_stream and softmax's sums are all of these); NaN gives NaN.
double portable_log(double x);
// e^x for any x (NaN gives NaN); 0 below -700, +inf above 709.
double portable_exp(double x);
#endif

}  // namespace bulkgnn
