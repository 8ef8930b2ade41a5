#include <tbb/enumerable_thread_specific.h>

#include <algorithm>
#include <limits>
#include <utility>

#include "bulkgnn/core/rng.hpp"
#include "bulkgnn/kernels/rules/labor_importance.hpp"
#include "common.hpp"
#include "kernels.hpp"

namespace bulkgnn::kernels::cpu {
namespace {

// Up to this many picks, Floyd's algorithm checks membership by scanning its
// picks; beyond it, a byte per candidate position.
constexpr std::uint32_t small_subset = 64;

// Per-thread buffers, grown to the largest row seen and never freed mid-call,
// so that sampling a row allocates nothing.
struct draw_buffers {
  std::vector<std::uint32_t> positions;
  std::vector<std::uint8_t> taken;
  std::vector<std::pair<double, std::uint32_t>> keys;
  std::vector<double> prefix;
};

// Floyd's algorithm as the reference runs it: the same draws, the same set.
// The membership test is a branch-free scan of the (few) picks so far, which
// the compiler vectorises: a binary search over a sorted array, inserting as
// it went, mispredicted about half its branches and was a third of the
// sampling time on small fanouts.
void floyd_small(philox_stream& rng, std::uint32_t degree, std::uint32_t s,
                 std::vector<std::uint32_t>& chosen) {
  chosen.clear();
  for (std::uint32_t j = degree - s; j < degree; ++j) {
    const std::uint32_t t = rng.uniform_below(j + 1);
    bool taken = false;
    for (const std::uint32_t c : chosen) taken |= c == t;
    // Every earlier pick is below j, so j is never taken already.
    chosen.push_back(taken ? j : t);
  }
  std::sort(chosen.begin(), chosen.end());
}

void floyd_large(philox_stream& rng, std::uint32_t degree, std::uint32_t s, draw_buffers& local) {
  if (local.taken.size() < degree) local.taken.resize(degree);
  auto& chosen = local.positions;
  chosen.clear();
  for (std::uint32_t j = degree - s; j < degree; ++j) {
    const std::uint32_t t = rng.uniform_below(j + 1);
    const std::uint32_t pick = local.taken[t] ? j : t;
    local.taken[pick] = 1;
    chosen.push_back(pick);
  }
  for (const std::uint32_t p : chosen) local.taken[p] = 0;
  std::sort(chosen.begin(), chosen.end());
}

void smallest_keys(philox_stream& rng, std::span<const float> weights, std::uint32_t s,
                   draw_buffers& local) {
  local.keys.resize(weights.size());
  for (std::uint32_t e = 0; e < weights.size(); ++e)
    local.keys[e] = {rng.exponential() / static_cast<double>(weights[e]), e};
  std::nth_element(local.keys.begin(), local.keys.begin() + s, local.keys.end());
  local.positions.resize(s);
  for (std::uint32_t k = 0; k < s; ++k) local.positions[k] = local.keys[k].second;
  std::sort(local.positions.begin(), local.positions.end());
}

void uniform_draws(philox_stream& rng, std::uint32_t degree, std::int64_t s, draw_buffers& local) {
  local.positions.resize(static_cast<std::size_t>(s));
  for (auto& p : local.positions) p = rng.uniform_below(degree);
  std::sort(local.positions.begin(), local.positions.end());
}

void weighted_draws(philox_stream& rng, std::span<const float> weights, std::int64_t s,
                    draw_buffers& local) {
  local.prefix.resize(weights.size());
  double total = 0.0;
  for (std::size_t e = 0; e < weights.size(); ++e) local.prefix[e] = total += weights[e];
  // The last position takes any target that rounding pushes past the total.
  const auto last = local.prefix.begin() + static_cast<std::ptrdiff_t>(weights.size() - 1);
  local.positions.resize(static_cast<std::size_t>(s));
  for (auto& p : local.positions) {
    const double target = rng.uniform_open01() * total;
    p = static_cast<std::uint32_t>(std::upper_bound(local.prefix.begin(), last, target) -
                                   local.prefix.begin());
  }
  std::sort(local.positions.begin(), local.positions.end());
}

class row_sampler {
 public:
  row_sampler(csr_view a, std::span<const vertex_t> rows, const row_streams& streams,
              const row_sampling_options& options)
      : a_(a),
        rows_(rows),
        streams_(streams),
        options_(options),
        by_value_(options.weights == weighting::by_value && a.weighted()) {}

  [[nodiscard]] std::int64_t count(std::int64_t i) const {
    const edge_t degree = a_.degree(rows_[i]);
    // Without replacement a row that is not taken whole has more entries than
    // the fanout, so every sampled row holds exactly `fanout` entries.
    return takes_whole_row(degree) ? degree : options_.fanout;
  }

  // Sampling is bound by memory latency: each row costs a random read of its
  // indptr entry, and each drawn entry a random read into a row that may be
  // long. Rows go in groups: the caller prefetches the indptr entries of the
  // next group while draw() runs on this one (returning the address, because
  // GCC deletes calls to functions whose only effect is a prefetch).
  static constexpr std::int64_t group = 16;

  [[nodiscard]] const edge_t* degree_address(std::int64_t i) const {
    return a_.indptr.data() + rows_[i];
  }

  // Sampling in two steps lets the random reads of a group of rows overlap:
  // draw() decides which positions row i takes (reading only its degree),
  // stores them in the output and prefetches the entries they point at;
  // resolve() then replaces the positions by those entries.
  void draw(std::int64_t i, csr_matrix& out, draw_buffers& local) const {
    const vertex_t row = rows_[i];
    const edge_t degree = a_.degree(row);
    const edge_t first = out.indptr[i];
    if (takes_whole_row(degree)) {
      copy_whole_row(row, first, out);
      return;
    }
    philox_stream rng(streams_.key(i, rows_));
    draw_positions(rng, row, static_cast<std::uint32_t>(degree), local);
    const vertex_t* columns = a_.row(row).data();
    for (std::size_t k = 0; k < local.positions.size(); ++k) {
      __builtin_prefetch(columns + local.positions[k]);
      out.indices[first + static_cast<edge_t>(k)] = static_cast<vertex_t>(local.positions[k]);
    }
  }

  void resolve(std::int64_t i, csr_matrix& out) const {
    const vertex_t row = rows_[i];
    if (takes_whole_row(a_.degree(row))) return;
    const auto columns = a_.row(row);
    const edge_t first = out.indptr[i];
    const edge_t last = out.indptr[i + 1];
    if (a_.weighted()) {
      const auto values = a_.row_values(row);
      for (edge_t e = first; e < last; ++e) out.values[e] = values[out.indices[e]];
    }
    for (edge_t e = first; e < last; ++e) out.indices[e] = columns[out.indices[e]];
  }

 private:
  [[nodiscard]] bool takes_whole_row(edge_t degree) const {
    const bool without = options_.mode == replacement::without;
    return options_.fanout == -1 || degree == 0 || (without && degree <= options_.fanout);
  }

  void draw_positions(philox_stream& rng, vertex_t row, std::uint32_t degree,
                      draw_buffers& local) const {
    const std::int64_t s = options_.fanout;
    if (options_.mode == replacement::with) {
      if (by_value_)
        weighted_draws(rng, a_.row_values(row), s, local);
      else
        uniform_draws(rng, degree, s, local);
    } else if (by_value_) {
      smallest_keys(rng, a_.row_values(row), static_cast<std::uint32_t>(s), local);
    } else if (s <= small_subset) {
      floyd_small(rng, degree, static_cast<std::uint32_t>(s), local.positions);
    } else {
      floyd_large(rng, degree, static_cast<std::uint32_t>(s), local);
    }
  }

  void copy_whole_row(vertex_t row, edge_t first, csr_matrix& out) const {
    const auto columns = a_.row(row);
    std::copy(columns.begin(), columns.end(), out.indices.begin() + first);
    if (!a_.weighted()) return;
    const auto values = a_.row_values(row);
    std::copy(values.begin(), values.end(), out.values.begin() + first);
  }

  csr_view a_;
  std::span<const vertex_t> rows_;
  const row_streams& streams_;
  const row_sampling_options& options_;
  bool by_value_;
};

}  // namespace

// Two passes over each row's variates (count, then fill): a Philox block per
// entry costs less than keeping the decisions between the passes.
csr_matrix sample_rows_with_shared_variates(csr_view a, std::span<const vertex_t> rows,
                                            const row_streams& streams, std::int64_t fanout) {
  auto takes = [&](std::int64_t i, vertex_t t) {
    const double threshold = static_cast<double>(fanout) / static_cast<double>(a.degree(rows[i]));
    return threshold >= 1 ||
           shared_variate(streams.key(static_cast<std::size_t>(i), rows), t) < threshold;
  };
  csr_matrix out =
      allocate_rows(static_cast<std::int64_t>(rows.size()), a.cols, false, [&](std::int64_t i) {
        const auto row = a.row(rows[i]);
        return static_cast<edge_t>(
            std::count_if(row.begin(), row.end(), [&](vertex_t t) { return takes(i, t); }));
      });
  for_each_row(out.rows, [&](const tbb::blocked_range<std::int64_t>& range) {
    for (std::int64_t i = range.begin(); i < range.end(); ++i) {
      auto next = out.indptr[i];
      for (const vertex_t t : a.row(rows[i]))
        if (takes(i, t)) out.indices[next++] = t;
    }
  });
  return out;
}

namespace {

// One minibatch's hop of LABOR-i on one thread: its columns numbered in order
// of first appearance (the order the reference sums them in), their
// importances and the rows' scales, kept per thread across minibatches.
class labor_segment {
 public:
  // Draws the rows `rows` (the segment starting at row `first` of the call),
  // appending their kept entries to `part` and setting each row's count.
  void draw(csr_view a, std::span<const vertex_t> rows, std::size_t first,
            std::span<const vertex_t> all_rows, const row_streams& streams, std::int64_t fanout,
            std::int64_t iterations, part_entries& part, std::span<edge_t> counts) {
    number_columns(a, rows);
    compute_scales(a, rows, fanout);
    const bool until_converged = iterations == -1;
    const std::int64_t steps = until_converged ? rules::labor_iteration_limit : iterations;
    double previous = std::numeric_limits<double>::infinity();
    for (std::int64_t step = 0; step < steps; ++step) {
      const double expected = step_importance(a, rows);
      if (until_converged && expected >= previous * (1.0 - rules::labor_tolerance)) break;
      previous = expected;
      importance_.swap(stepped_);
      compute_scales(a, rows, fanout);
    }
    std::size_t e = 0;
    for (std::size_t i = 0; i < rows.size(); ++i) {
      const auto row = a.row(rows[i]);
      const auto before = part.columns.size();
      const auto key = streams.key(first + i, all_rows);
      const bool whole = static_cast<std::int64_t>(row.size()) <= fanout;
      for (const vertex_t t : row) {
        const double importance = importance_[static_cast<std::size_t>(local_[e++])];
        if (whole) {
          part.columns.push_back(t);
          part.values.push_back(1.0f);
        } else if (rules::labor_keeps(shared_variate(key, t), scales_[i], importance)) {
          part.columns.push_back(t);
          part.values.push_back(rules::labor_weight(scales_[i], importance));
        }
      }
      counts[i] = static_cast<edge_t>(part.columns.size() - before);
    }
  }

 private:
  void number_columns(csr_view a, std::span<const vertex_t> rows) {
    std::size_t entries = 0;
    for (const vertex_t r : rows) entries += static_cast<std::size_t>(a.degree(r));
    map_.reset(entries);
    local_.clear();
    vertex_t next = 0;
    for (const vertex_t r : rows)
      for (const vertex_t t : a.row(r)) {
        const auto [id, inserted] = map_.try_emplace(t, next);
        next += inserted ? 1 : 0;
        local_.push_back(id);
      }
    importance_.assign(static_cast<std::size_t>(next), 1.0);
  }

  void compute_scales(csr_view a, std::span<const vertex_t> rows, std::int64_t fanout) {
    scales_.resize(rows.size());
    std::size_t e = 0;
    for (std::size_t i = 0; i < rows.size(); ++i) {
      const auto d = static_cast<std::size_t>(a.degree(rows[i]));
      row_.resize(d);
      for (std::size_t k = 0; k < d; ++k)
        row_[k] = importance_[static_cast<std::size_t>(local_[e + k])];
      e += d;
      if (d == 0)
        scales_[i] = 0.0;
      else if (static_cast<std::int64_t>(d) <= fanout)
        scales_[i] = rules::labor_whole_row_scale(row_, d);
      else
        scales_[i] = rules::labor_row_scale(row_, d, fanout);
    }
  }

  // stepped_ = π·max c; returns Σ min(1, stepped_) in column order.
  double step_importance(csr_view a, std::span<const vertex_t> rows) {
    largest_.assign(importance_.size(), 0.0);
    std::size_t e = 0;
    for (std::size_t i = 0; i < rows.size(); ++i)
      for (const auto end = e + static_cast<std::size_t>(a.degree(rows[i])); e < end; ++e) {
        double& l = largest_[static_cast<std::size_t>(local_[e])];
        l = std::max(l, scales_[i]);
      }
    stepped_.resize(importance_.size());
    double expected = 0.0;
    for (std::size_t t = 0; t < importance_.size(); ++t) {
      stepped_[t] = importance_[t] * largest_[t];
      expected += std::min(1.0, stepped_[t]);
    }
    return expected;
  }

  vertex_map map_;
  std::vector<vertex_t> local_;
  std::vector<double> importance_, stepped_, largest_, scales_, row_;
};

}  // namespace

// Minibatches in parallel, each on one thread: a minibatch's importances
// couple all its rows, and its steps are sequential.
csr_matrix sample_rows_with_importance(csr_view a, const segmented_vertices& rows,
                                       const row_streams& streams, std::int64_t fanout,
                                       std::int64_t iterations) {
  const std::int64_t segments = rows.segments();
  csr_matrix out;
  out.rows = static_cast<std::int64_t>(rows.vertices.size());
  out.cols = a.cols;
  out.indptr.assign(static_cast<std::size_t>(out.rows) + 1, 0);
  std::vector<part_entries> parts(static_cast<std::size_t>(segments));
  tbb::enumerable_thread_specific<labor_segment> scratches;
  tbb::parallel_for(std::int64_t{0}, segments, [&](std::int64_t m) {
    const auto first = static_cast<std::size_t>(rows.offsets[m]);
    scratches.local().draw(a, rows.segment(m), first, rows.vertices, streams, fanout, iterations,
                           parts[static_cast<std::size_t>(m)],
                           std::span(out.indptr).subspan(first + 1, rows.segment(m).size()));
  });
  place_part_entries(out, parts, [&](std::size_t m) { return rows.offsets[m]; });
  return out;
}

csr_matrix sample_rows(csr_view a, std::span<const vertex_t> rows, const row_streams& streams,
                       const row_sampling_options& options) {
  const row_sampler sampler(a, rows, streams, options);
  const auto n = static_cast<std::int64_t>(rows.size());
  csr_matrix out = allocate_rows(n, a.cols, a.weighted(), [&](std::int64_t i) {
    if (i + row_sampler::group < n)
      __builtin_prefetch(sampler.degree_address(i + row_sampler::group));
    return sampler.count(i);
  });
  tbb::enumerable_thread_specific<draw_buffers> scratches;
  for_each_row(n, [&](const tbb::blocked_range<std::int64_t>& range) {
    auto& local = scratches.local();
    const std::int64_t end = range.end();
    for (std::int64_t group = range.begin(); group < end; group += row_sampler::group) {
      const std::int64_t stop = std::min(group + row_sampler::group, end);
      for (std::int64_t i = group; i < stop; ++i) {
        if (i + row_sampler::group < end)
          __builtin_prefetch(sampler.degree_address(i + row_sampler::group));
        sampler.draw(i, out, local);
      }
      for (std::int64_t i = group; i < stop; ++i) sampler.resolve(i, out);
    }
  });
  return out;
}

namespace {

bool by_key_then_position(const keyed_entry& x, const keyed_entry& y) {
  return std::pair(x.key, x.position) < std::pair(y.key, y.position);
}

bool by_position(const keyed_entry& x, const keyed_entry& y) { return x.position < y.position; }

// Keeps the `fanout` entries of smallest (key, position) of one row, in
// position order.
void keep_smallest(std::vector<keyed_entry>& row, std::int64_t fanout) {
  const auto s = static_cast<std::size_t>(fanout);
  if (row.size() > s) {
    std::nth_element(row.begin(), row.begin() + static_cast<std::ptrdiff_t>(s), row.end(),
                     by_key_then_position);
    row.resize(s);
  }
  std::sort(row.begin(), row.end(), by_position);
}

// Concatenates per-row results in row order.
std::vector<keyed_entry> concatenate(std::vector<std::vector<keyed_entry>>& rows) {
  std::size_t total = 0;
  for (const auto& row : rows) total += row.size();
  std::vector<keyed_entry> out;
  out.reserve(total);
  for (const auto& row : rows) out.insert(out.end(), row.begin(), row.end());
  return out;
}

}  // namespace

std::vector<keyed_entry> smallest_keyed_entries(csr_view a, std::span<const vertex_t> rows,
                                                std::span<const std::int64_t> first_position,
                                                const row_streams& streams, std::int64_t fanout) {
  // Layer-wise sampling has few, long rows (one per minibatch of a bulk):
  // keys go to a per-thread draw_buffers, and only the row's picks are kept.
  std::vector<std::vector<keyed_entry>> per_row(rows.size());
  tbb::enumerable_thread_specific<draw_buffers> scratches;
  tbb::parallel_for(std::size_t{0}, rows.size(), [&](std::size_t i) {
    const auto columns = a.row(rows[i]);
    const auto values = a.row_values(rows[i]);
    philox_stream rng(streams.key(i, rows));
    // Each key takes two words (one uniform double), as in smallest_keys.
    rng.skip_to_word(2 * static_cast<std::uint64_t>(first_position[i]));
    auto& keys = scratches.local().keys;
    keys.resize(columns.size());
    for (std::uint32_t e = 0; e < columns.size(); ++e)
      keys[e] = {rng.exponential() / static_cast<double>(values[e]), e};
    const std::size_t s = std::min(keys.size(), static_cast<std::size_t>(fanout));
    // Positions in the whole row order like e, so (key, e) orders as (key, position).
    std::nth_element(keys.begin(), keys.begin() + static_cast<std::ptrdiff_t>(s), keys.end());
    keys.resize(s);
    std::sort(keys.begin(), keys.end(),
              [](const auto& x, const auto& y) { return x.second < y.second; });
    auto& row = per_row[i];
    for (const auto& [key, e] : keys)
      row.push_back(
          {key, first_position[i] + e, static_cast<std::int64_t>(i), columns[e], values[e]});
  });
  return concatenate(per_row);
}

csr_matrix take_smallest_keys(std::span<const keyed_entry> candidates, std::int64_t rows,
                              std::int64_t cols, std::int64_t fanout) {
  std::vector<std::vector<keyed_entry>> per_row(static_cast<std::size_t>(rows));
  for (const auto& c : candidates) per_row[c.row].push_back(c);
  tbb::parallel_for(std::size_t{0}, per_row.size(),
                    [&](std::size_t i) { keep_smallest(per_row[i], fanout); });
  csr_matrix out = allocate_rows(
      rows, cols, true, [&](std::int64_t i) { return static_cast<edge_t>(per_row[i].size()); });
  for_each_row(rows, [&](const tbb::blocked_range<std::int64_t>& range) {
    for (std::int64_t i = range.begin(); i < range.end(); ++i)
      for (std::size_t k = 0; k < per_row[i].size(); ++k) {
        out.indices[out.indptr[i] + static_cast<edge_t>(k)] = per_row[i][k].column;
        out.values[out.indptr[i] + static_cast<edge_t>(k)] = per_row[i][k].value;
      }
  });
  return out;
}

}  // namespace bulkgnn::kernels::cpu
