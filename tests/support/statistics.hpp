#pragma once

// Statistical tests for samplers, each with a stated power.
//
// A sampler test fixes its seeds, so it either always passes or always fails;
// what makes it worth having is that a broken sampler would fail it. Each test
// here is designed before it runs: its false-alarm rate alpha (the chance
// that a correct sampler would fail it, over seeds) and the smallest bias it
// detects with a stated probability (its power). Tests assert their own
// design (`power(...) >= 0.99`) before looking at the sample, so that a test
// made cheaper later cannot silently lose its power.

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <stdexcept>
#include <vector>

namespace bulkgnn::testing {

// The false-alarm rate of every sampler test: a correct sampler fails one
// test in 10^4 seeds.
inline constexpr double sampler_alpha = 1e-4;

// The least probability with which a sampler test must detect the bias it
// names.
inline constexpr double required_power = 0.99;

// P(Z <= z) for a standard normal Z.
inline double normal_cdf(double z) { return 0.5 * std::erfc(-z / std::sqrt(2.0)); }

// The z with P(Z > z) = p, 0 < p < 1, by bisection (exact to 1e-12).
inline double normal_upper_quantile(double p) {
  if (!(p > 0 && p < 1)) throw std::invalid_argument("normal_upper_quantile: p outside (0, 1)");
  double lo = -40, hi = 40;
  for (int i = 0; i < 200 && hi - lo > 1e-12; ++i) {
    const double mid = 0.5 * (lo + hi);
    (1 - normal_cdf(mid) > p ? lo : hi) = mid;
  }
  return 0.5 * (lo + hi);
}

// One two-sided binomial z-test per cell (a candidate's inclusion count, say),
// the family's false-alarm rate held at alpha by Bonferroni: each cell is
// tested at alpha / cells. A cell biased alone is what such a family is
// weakest against; a bias spread over several cells is detected at least as
// often as the one cell of them most likely to be flagged.
struct count_test_family {
  std::size_t cells = 0;
  double alpha = sampler_alpha;

  [[nodiscard]] double critical_z() const {
    return normal_upper_quantile(alpha / (2.0 * static_cast<double>(cells)));
  }

  // The probability that a cell of probability p per trial is flagged after
  // `trials` independent trials when it is truly drawn with probability
  // p·(1 + relative_bias) (the normal approximation to the binomial).
  [[nodiscard]] double power(double trials, double p, double relative_bias) const {
    const double q = std::clamp(p * (1 + relative_bias), 0.0, 1.0);
    const double null_sd = std::sqrt(trials * p * (1 - p));
    const double true_sd = std::sqrt(std::max(trials * q * (1 - q), 1e-300));
    const double shift = trials * (q - p);
    const double z = critical_z();
    return normal_cdf((shift - z * null_sd) / true_sd) +
           normal_cdf((-shift - z * null_sd) / true_sd);
  }

  // The least power over every cell of the family against a relative bias of
  // that cell alone.
  [[nodiscard]] double least_power(double trials, const std::vector<double>& probabilities,
                                   double relative_bias) const {
    double least = 1;
    for (double p : probabilities)
      least = std::min({least, power(trials, p, relative_bias), power(trials, p, -relative_bias)});
    return least;
  }

  struct verdict {
    double worst_z = 0;     // the largest |z| over the cells
    std::size_t worst = 0;  // its cell
    bool rejected = false;  // worst_z above critical_z()
  };

  // The test itself: counts[i] successes of probability probabilities[i] in
  // `trials` trials each.
  [[nodiscard]] verdict test(const std::vector<double>& counts,
                             const std::vector<double>& probabilities, double trials) const {
    if (counts.size() != cells || probabilities.size() != cells)
      throw std::invalid_argument("count_test_family: counts, probabilities and cells differ");
    verdict v;
    for (std::size_t i = 0; i < cells; ++i) {
      const double p = probabilities[i];
      const double sd = std::sqrt(trials * p * (1 - p));
      const double z =
          sd > 0 ? std::abs(counts[i] - trials * p) / sd
                 : (counts[i] == trials * p ? 0 : std::numeric_limits<double>::infinity());
      if (z > v.worst_z) v = {z, i, false};
    }
    v.rejected = v.worst_z > critical_z();
    return v;
  }
};

// P(X > x) for X chi-square with `degrees` (real) degrees of freedom, by
// Wilson and Hilferty's cube-root normal approximation (a few percent off for
// degrees >= 2, closer as they grow).
inline double chi_square_tail_above(double x, double degrees) {
  const double a = 2.0 / (9.0 * degrees);
  return 1 - normal_cdf((std::cbrt(x / degrees) - (1 - a)) / std::sqrt(a));
}

// The power of a Pearson chi-square test with `degrees` degrees of freedom,
// rejecting above `critical`, when the cells truly have noncentrality
// lambda = N · Σ (q_i - p_i)² / p_i (q the true distribution, p the tested
// one, N the trials), by Patnaik's approximation of the noncentral
// chi-square by a scaled central one.
inline double chi_square_power(double degrees, double lambda, double critical) {
  const double scale = (degrees + 2 * lambda) / (degrees + lambda);
  const double matched = (degrees + lambda) * (degrees + lambda) / (degrees + 2 * lambda);
  return chi_square_tail_above(critical / scale, matched);
}

// P(X > c) for X Poisson with the given mean.
inline double poisson_tail_above(double mean, std::int64_t c) {
  if (c < 0) return 1;
  // Summing the pmf up to c in log space: exact enough for means to 10^6.
  double cdf = 0, log_term = -mean;
  for (std::int64_t k = 0; k <= c; ++k) {
    if (k > 0) log_term += std::log(mean) - std::log(static_cast<double>(k));
    cdf += std::exp(log_term);
  }
  return std::max(0.0, 1 - cdf);
}

// The least c with P(X > c) <= alpha for X Poisson(mean).
inline std::int64_t poisson_upper_critical(double mean, double alpha = sampler_alpha) {
  std::int64_t c = static_cast<std::int64_t>(mean);
  while (poisson_tail_above(mean, c) > alpha) ++c;
  return c;
}

// A count of coincidences (two draws that came out identical) among `pairs`
// pairs of independent draws, each identical with probability `chance`: under
// independence about Poisson(pairs · chance). Rejected above the upper alpha
// critical value. A dependence that makes a fraction f of the pairs identical
// adds about f · pairs coincidences.
struct coincidence_test {
  double pairs = 0;
  double chance = 0;
  double alpha = sampler_alpha;

  [[nodiscard]] double expected() const { return pairs * chance; }
  [[nodiscard]] std::int64_t critical() const { return poisson_upper_critical(expected(), alpha); }
  // Detection probability when a fraction f of the pairs is made identical.
  [[nodiscard]] double power(double identical_fraction) const {
    return poisson_tail_above(expected() + identical_fraction * pairs, critical());
  }
  [[nodiscard]] bool rejected(std::int64_t coincidences) const { return coincidences > critical(); }
};

// Adaptive Simpson's rule for a smooth f on [a, b] to absolute error `tolerance`.
template <class F>
double adaptive_simpson(F f, double a, double b, double tolerance) {
  struct step {
    static double run(F& f, double a, double b, double fa, double fm, double fb, double whole,
                      double tolerance, int depth) {
      const double m = 0.5 * (a + b), lm = 0.5 * (a + m), rm = 0.5 * (m + b);
      const double flm = f(lm), frm = f(rm);
      const double left = (m - a) / 6 * (fa + 4 * flm + fm);
      const double right = (b - m) / 6 * (fm + 4 * frm + fb);
      if (depth <= 0 || std::abs(left + right - whole) <= 15 * tolerance)
        return left + right + (left + right - whole) / 15;
      return run(f, a, m, fa, flm, fm, left, tolerance / 2, depth - 1) +
             run(f, m, b, fm, frm, fb, right, tolerance / 2, depth - 1);
    }
  };
  const double fa = f(a), fb = f(b), fm = f(0.5 * (a + b));
  return step::run(f, a, b, fa, fm, fb, (b - a) / 6 * (fa + 4 * fm + fb), tolerance, 40);
}

// Inclusion probabilities of successive sampling: `draws` items drawn one after
// another without replacement, each draw choosing among the items left with
// probability proportional to weights[i] (numpy.random.choice(replace=False,
// p=...); exponential keys E_i / w_i, the `draws` smallest). Exact up to the
// quadrature (1e-9): item i is drawn iff fewer than `draws` other keys fall
// below its own, so, with y = w_i t the law of item i's scaled key,
//   pi_i = integral over y >= 0 of exp(-y) P(N_i(y / w_i) < draws) dy,
// N_i(t) the number of other keys below t (a Poisson-binomial count).
inline std::vector<double> successive_sampling_inclusion(const std::vector<double>& weights,
                                                         int draws) {
  const std::size_t n = weights.size();
  if (draws >= static_cast<int>(n)) return std::vector<double>(n, 1.0);
  std::vector<double> inclusion(n, 0.0), fewer(static_cast<std::size_t>(draws));
  for (std::size_t i = 0; i < n; ++i) {
    auto integrand = [&](double y) {
      const double t = y / weights[i];
      // fewer[k] = P(exactly k other keys below t), k < draws.
      std::fill(fewer.begin(), fewer.end(), 0.0);
      fewer[0] = 1;
      for (std::size_t j = 0; j < n; ++j) {
        if (j == i) continue;
        const double below = -std::expm1(-weights[j] * t);
        for (int k = draws - 1; k > 0; --k)
          fewer[k] = fewer[k] * (1 - below) + fewer[k - 1] * below;
        fewer[0] *= 1 - below;
      }
      double p = 0;
      for (int k = 0; k < draws; ++k) p += fewer[k];
      return std::exp(-y) * p;
    };
    // exp(-40) < 1e-17: the tail beyond adds nothing.
    inclusion[i] = adaptive_simpson(integrand, 0.0, 40.0, 1e-11);
  }
  return inclusion;
}

}  // namespace bulkgnn::testing
