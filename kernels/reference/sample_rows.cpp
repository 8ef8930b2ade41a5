#include <algorithm>
#include <limits>
#include <map>
#include <numeric>
#include <set>
#include <utility>
#include <vector>

#include "bulkgnn/core/rng.hpp"
#include "bulkgnn/kernels/rules/labor_importance.hpp"
#include "kernels.hpp"

namespace bulkgnn::kernels::reference {
namespace {

using positions = std::vector<std::uint32_t>;

positions every_position(std::uint32_t degree) {
  positions all(degree);
  std::iota(all.begin(), all.end(), 0u);
  return all;
}

// Floyd's algorithm: a uniform s-subset of [0, degree) from exactly s draws.
positions floyd_subset(philox_stream& rng, std::uint32_t degree, std::uint32_t s) {
  std::set<std::uint32_t> chosen;
  for (std::uint32_t j = degree - s; j < degree; ++j) {
    const std::uint32_t t = rng.uniform_below(j + 1);
    chosen.insert(chosen.contains(t) ? j : t);
  }
  return {chosen.begin(), chosen.end()};
}

// Successive sampling: the s entries with the smallest exponential keys E/w,
// ties broken by position.
positions smallest_keys(philox_stream& rng, std::span<const float> weights, std::uint32_t s) {
  std::vector<std::pair<double, std::uint32_t>> keys;
  for (std::uint32_t e = 0; e < weights.size(); ++e)
    keys.emplace_back(rng.exponential() / static_cast<double>(weights[e]), e);
  std::sort(keys.begin(), keys.end());
  positions chosen;
  for (std::uint32_t k = 0; k < s; ++k) chosen.push_back(keys[k].second);
  std::sort(chosen.begin(), chosen.end());
  return chosen;
}

positions uniform_draws(philox_stream& rng, std::uint32_t degree, std::int64_t s) {
  positions drawn;
  for (std::int64_t k = 0; k < s; ++k) drawn.push_back(rng.uniform_below(degree));
  std::sort(drawn.begin(), drawn.end());
  return drawn;
}

// Inverse CDF: the first position whose prefix sum exceeds u · total.
positions weighted_draws(philox_stream& rng, std::span<const float> weights, std::int64_t s) {
  std::vector<double> prefix;
  double total = 0.0;
  for (const float w : weights) prefix.push_back(total += w);
  positions drawn;
  for (std::int64_t k = 0; k < s; ++k) {
    const double target = rng.uniform_open01() * total;
    std::uint32_t e = 0;
    while (e + 1 < prefix.size() && !(prefix[e] > target)) ++e;
    drawn.push_back(e);
  }
  std::sort(drawn.begin(), drawn.end());
  return drawn;
}

positions draw_positions(philox_stream& rng, csr_view a, vertex_t row,
                         const row_sampling_options& options) {
  const auto degree = static_cast<std::uint32_t>(a.degree(row));
  const std::int64_t s = options.fanout;
  const bool by_value = options.weights == weighting::by_value && a.weighted();
  if (s == -1 || degree == 0) return every_position(degree);
  if (options.mode == replacement::with)
    return by_value ? weighted_draws(rng, a.row_values(row), s) : uniform_draws(rng, degree, s);
  if (degree <= s) return every_position(degree);
  const auto count = static_cast<std::uint32_t>(s);
  return by_value ? smallest_keys(rng, a.row_values(row), count) : floyd_subset(rng, degree, count);
}

}  // namespace

csr_matrix sample_rows(csr_view a, std::span<const vertex_t> rows, const row_streams& streams,
                       const row_sampling_options& options) {
  csr_matrix out;
  out.rows = static_cast<std::int64_t>(rows.size());
  out.cols = a.cols;
  for (std::size_t i = 0; i < rows.size(); ++i) {
    philox_stream rng(streams.key(i, rows));
    for (const std::uint32_t e : draw_positions(rng, a, rows[i], options)) {
      out.indices.push_back(a.row(rows[i])[e]);
      if (a.weighted()) out.values.push_back(a.row_values(rows[i])[e]);
    }
    out.indptr.push_back(static_cast<edge_t>(out.indices.size()));
  }
  return out;
}

csr_matrix sample_rows_with_shared_variates(csr_view a, std::span<const vertex_t> rows,
                                            const row_streams& streams, std::int64_t fanout) {
  csr_matrix out;
  out.rows = static_cast<std::int64_t>(rows.size());
  out.cols = a.cols;
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const auto row = a.row(rows[i]);
    const double threshold = static_cast<double>(fanout) / static_cast<double>(row.size());
    for (const vertex_t t : row)
      if (threshold >= 1 || shared_variate(streams.key(i, rows), t) < threshold)
        out.indices.push_back(t);
    out.indptr.push_back(static_cast<edge_t>(out.indices.size()));
  }
  return out;
}

namespace {

// The scale of each row of one minibatch, given its columns' importances.
std::vector<double> labor_scales(csr_view a, std::span<const vertex_t> rows,
                                 const std::map<vertex_t, double>& importance,
                                 std::int64_t fanout) {
  std::vector<double> scales;
  for (const vertex_t r : rows) {
    std::vector<double> row;
    for (const vertex_t t : a.row(r)) row.push_back(importance.at(t));
    if (row.empty())
      scales.push_back(0.0);
    else if (static_cast<std::int64_t>(row.size()) <= fanout)
      scales.push_back(rules::labor_whole_row_scale(row, row.size()));
    else
      scales.push_back(rules::labor_row_scale(row, row.size(), fanout));
  }
  return scales;
}

// One fixed-point step, π_t ← π_t·max_s c_s over `order` (every column,
// in order of first appearance); returns Σ_t min(1, the new π_t), summed in
// that order: the expected count of distinct columns before the step.
double labor_step(csr_view a, std::span<const vertex_t> rows, std::span<const double> scales,
                  std::span<const vertex_t> order, std::map<vertex_t, double>& importance) {
  std::map<vertex_t, double> largest;
  for (std::size_t i = 0; i < rows.size(); ++i)
    for (const vertex_t t : a.row(rows[i])) largest[t] = std::max(largest[t], scales[i]);
  double expected = 0.0;
  for (const vertex_t t : order) {
    importance[t] *= largest[t];
    expected += std::min(1.0, importance[t]);
  }
  return expected;
}

}  // namespace

csr_matrix sample_rows_with_importance(csr_view a, const segmented_vertices& rows,
                                       const row_streams& streams, std::int64_t fanout,
                                       std::int64_t iterations) {
  csr_matrix out;
  out.rows = static_cast<std::int64_t>(rows.vertices.size());
  out.cols = a.cols;
  const bool until_converged = iterations == -1;
  const std::int64_t steps = until_converged ? rules::labor_iteration_limit : iterations;
  for (std::int64_t m = 0; m < rows.segments(); ++m) {
    const auto segment = rows.segment(m);
    std::map<vertex_t, double> importance;
    std::vector<vertex_t> order;
    for (const vertex_t r : segment)
      for (const vertex_t t : a.row(r))
        if (importance.emplace(t, 1.0).second) order.push_back(t);
    auto scales = labor_scales(a, segment, importance, fanout);
    double previous = std::numeric_limits<double>::infinity();
    for (std::int64_t step = 0; step < steps; ++step) {
      auto stepped = importance;
      const double expected = labor_step(a, segment, scales, order, stepped);
      if (until_converged && expected >= previous * (1.0 - rules::labor_tolerance)) break;
      previous = expected;
      importance = std::move(stepped);
      scales = labor_scales(a, segment, importance, fanout);
    }
    for (std::size_t i = 0; i < segment.size(); ++i) {
      const auto row = a.row(segment[i]);
      const bool whole = static_cast<std::int64_t>(row.size()) <= fanout;
      const auto key = streams.key(static_cast<std::size_t>(rows.offsets[m]) + i, rows.vertices);
      for (const vertex_t t : row) {
        if (whole) {
          out.indices.push_back(t);
          out.values.push_back(1.0f);
        } else if (rules::labor_keeps(shared_variate(key, t), scales[i], importance.at(t))) {
          out.indices.push_back(t);
          out.values.push_back(rules::labor_weight(scales[i], importance.at(t)));
        }
      }
      out.indptr.push_back(static_cast<edge_t>(out.indices.size()));
    }
  }
  return out;
}

namespace {

bool by_key_then_position(const keyed_entry& x, const keyed_entry& y) {
  return std::pair(x.key, x.position) < std::pair(y.key, y.position);
}

}  // namespace

std::vector<keyed_entry> smallest_keyed_entries(csr_view a, std::span<const vertex_t> rows,
                                                std::span<const std::int64_t> first_position,
                                                const row_streams& streams, std::int64_t fanout) {
  std::vector<keyed_entry> out;
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const auto columns = a.row(rows[i]);
    const auto values = a.row_values(rows[i]);
    philox_stream rng(streams.key(i, rows));
    // Each key takes two words (one uniform double), as in smallest_keys.
    rng.skip_to_word(2 * static_cast<std::uint64_t>(first_position[i]));
    std::vector<keyed_entry> row;
    for (std::size_t e = 0; e < columns.size(); ++e)
      row.push_back({rng.exponential() / static_cast<double>(values[e]),
                     first_position[i] + static_cast<std::int64_t>(e), static_cast<std::int64_t>(i),
                     columns[e], values[e]});
    std::sort(row.begin(), row.end(), by_key_then_position);
    row.resize(std::min<std::size_t>(row.size(), static_cast<std::size_t>(fanout)));
    std::sort(row.begin(), row.end(),
              [](const keyed_entry& x, const keyed_entry& y) { return x.position < y.position; });
    out.insert(out.end(), row.begin(), row.end());
  }
  return out;
}

csr_matrix take_smallest_keys(std::span<const keyed_entry> candidates, std::int64_t rows,
                              std::int64_t cols, std::int64_t fanout) {
  std::vector<std::vector<keyed_entry>> by_row(static_cast<std::size_t>(rows));
  for (const auto& c : candidates) by_row[c.row].push_back(c);
  csr_matrix out;
  out.rows = rows;
  out.cols = cols;
  for (auto& row : by_row) {
    std::sort(row.begin(), row.end(), by_key_then_position);
    row.resize(std::min<std::size_t>(row.size(), static_cast<std::size_t>(fanout)));
    std::sort(row.begin(), row.end(),
              [](const keyed_entry& x, const keyed_entry& y) { return x.position < y.position; });
    for (const auto& c : row) {
      out.indices.push_back(c.column);
      out.values.push_back(c.value);
    }
    out.indptr.push_back(static_cast<edge_t>(out.indices.size()));
  }
  return out;
}

}  // namespace bulkgnn::kernels::reference
