#pragma once

#include <tbb/blocked_range.h>
#include <tbb/global_control.h>
#include <tbb/parallel_for.h>

#include <algorithm>
#include <bit>
#include <cstdint>
#include <numeric>
#include <utility>
#include <vector>

#include "bulkgnn/core/csr.hpp"

namespace bulkgnn::kernels::cpu {

// Rows per task: enough to amortise scheduling and thread-local look-ups,
// few enough to balance skewed degrees.
inline constexpr std::size_t row_grain = 256;

template <class Body>
void for_each_row(std::int64_t rows, Body&& body) {
  tbb::parallel_for(tbb::blocked_range<std::int64_t>(0, rows, row_grain),
                    [&](const tbb::blocked_range<std::int64_t>& range) { body(range); });
}

// Two-pass output sizing: `count(i)` gives the entries of row i, and the
// result's indptr becomes their prefix sum with indices (and values) sized to
// match, ready to be filled in parallel.
template <class Count>
csr_matrix allocate_rows(std::int64_t rows, std::int64_t cols, bool with_values, Count&& count) {
  csr_matrix out;
  out.rows = rows;
  out.cols = cols;
  out.indptr.assign(static_cast<std::size_t>(rows) + 1, 0);
  for_each_row(rows, [&](const tbb::blocked_range<std::int64_t>& range) {
    for (std::int64_t i = range.begin(); i < range.end(); ++i) out.indptr[i + 1] = count(i);
  });
  std::inclusive_scan(out.indptr.begin(), out.indptr.end(), out.indptr.begin());
  out.indices.resize(static_cast<std::size_t>(out.indptr.back()));
  if (with_values) out.values.resize(out.indices.size());
  return out;
}

// Entries found for a run of output rows (a chunk of rows, a minibatch), in
// row order.
struct part_entries {
  std::vector<vertex_t> columns;
  std::vector<float> values;
};

// Completes a one-pass output: out.indptr[i + 1] holds row i's entry count
// and parts[p] the entries of the rows from first_row(p) on; indptr becomes
// the prefix sum and each part's entries are copied into place (in
// parallel; the parts are emptied).
template <class FirstRow>
void place_part_entries(csr_matrix& out, std::vector<part_entries>& parts, FirstRow&& first_row) {
  std::inclusive_scan(out.indptr.begin(), out.indptr.end(), out.indptr.begin());
  out.indices.resize(static_cast<std::size_t>(out.indptr.back()));
  out.values.resize(out.indices.size());
  tbb::parallel_for(std::size_t{0}, parts.size(), [&](std::size_t p) {
    auto& part = parts[p];
    const auto first = out.indptr[static_cast<std::size_t>(first_row(p))];
    std::copy(part.columns.begin(), part.columns.end(), out.indices.begin() + first);
    std::copy(part.values.begin(), part.values.end(), out.values.begin() + first);
    part = {};
  });
}

// One-pass output for rows whose entries are costly to find (SpGEMM products,
// neighbour look-ups in a map): each task finds its rows' entries once, into
// task-local buffers, and they are then copied into place. allocate_rows()
// would find every entry twice, once to count and once to fill, and that
// search, not the copy, is the cost. `append(i, columns, values)` appends
// row i's entries, in output order, to the two vectors it is given.
//
// Rows go in chunks of up to row_grain, but at least about four chunks per
// worker, so that a few very heavy rows (a bulk of LADIES minibatches is 16
// rows of millions of products) still spread over every thread.
template <class Append>
csr_matrix build_rows(std::int64_t rows, std::int64_t cols, Append&& append) {
  const auto workers = static_cast<std::int64_t>(
      tbb::global_control::active_value(tbb::global_control::max_allowed_parallelism));
  const std::int64_t grain = std::clamp<std::int64_t>(
      rows / (4 * std::max<std::int64_t>(workers, 1)), 1, static_cast<std::int64_t>(row_grain));
  const std::int64_t chunks = (rows + grain - 1) / grain;
  std::vector<part_entries> parts(static_cast<std::size_t>(chunks));
  csr_matrix out;
  out.rows = rows;
  out.cols = cols;
  out.indptr.assign(static_cast<std::size_t>(rows) + 1, 0);
  tbb::parallel_for(std::int64_t{0}, chunks, [&](std::int64_t c) {
    auto& part = parts[static_cast<std::size_t>(c)];
    for (std::int64_t i = c * grain; i < std::min(rows, (c + 1) * grain); ++i) {
      const auto before = part.columns.size();
      append(i, part.columns, part.values);
      out.indptr[i + 1] = static_cast<edge_t>(part.columns.size() - before);
    }
  });
  place_part_entries(out, parts,
                     [&](std::size_t c) { return static_cast<std::int64_t>(c) * grain; });
  return out;
}

// Open-addressing map from vertex id to a local id (linear probing), reused
// across segments so that a segment costs O(its size), not O(vertex count).
// Keys and values share a slot so that a probe touches one cache line.
class vertex_map {
 public:
  static constexpr vertex_t absent = -1;

  // Empties the map and makes room for `expected` keys.
  void reset(std::size_t expected) {
    const auto capacity = std::bit_ceil(std::max<std::size_t>(16, 2 * expected));
    if (slots_.size() < capacity) slots_.resize(capacity);
    mask_ = capacity - 1;
    shift_ = 64 - std::countr_zero(capacity);
    std::fill_n(slots_.begin(), capacity, slot{absent, 0});
  }

  // The value slot of `key`, inserting `initial` first if the key is new;
  // the flag says whether it was inserted.
  std::pair<vertex_t&, bool> try_emplace(vertex_t key, vertex_t initial) {
    std::size_t at = home(key);
    while (slots_[at].key != absent) {
      if (slots_[at].key == key) return {slots_[at].value, false};
      at = (at + 1) & mask_;
    }
    slots_[at] = {key, initial};
    return {slots_[at].value, true};
  }

  // Where a probe for `key` starts, for the caller to prefetch (GCC drops a
  // prefetch hidden in a function that does nothing else).
  [[nodiscard]] const void* probe_address(vertex_t key) const { return &slots_[home(key)]; }

  [[nodiscard]] vertex_t find(vertex_t key) const {
    for (std::size_t at = home(key); slots_[at].key != absent; at = (at + 1) & mask_)
      if (slots_[at].key == key) return slots_[at].value;
    return absent;
  }

 private:
  struct slot {
    vertex_t key;
    vertex_t value;
  };

  // Fibonacci hashing: the top bits of key · 2^64/φ spread clustered ids.
  [[nodiscard]] std::size_t home(vertex_t key) const {
    return static_cast<std::size_t>(
        (static_cast<std::uint64_t>(static_cast<std::uint32_t>(key)) * 0x9E3779B97F4A7C15ull) >>
        shift_);
  }

  std::vector<slot> slots_;
  std::size_t mask_ = 0;
  int shift_ = 64;
};

// Elementwise work below this many items runs on the calling thread: on small
// operands the tasks would cost more than they save.
inline constexpr std::int64_t parallel_items = std::int64_t{1} << 16;

// Calls body(begin, end) on pieces covering [0, count), each worth about
// parallel_items / 2 items when an index costs `items_per_index`, in parallel
// only when the whole is large. Pieces are disjoint, so per-index work gives
// the same result for any thread count.
template <class Body>
void for_pieces(std::int64_t count, std::int64_t items_per_index, Body&& body) {
  const std::int64_t items = count * items_per_index;
  if (items < parallel_items) {
    if (count > 0) body(std::int64_t{0}, count);
    return;
  }
  const std::int64_t grain =
      std::max<std::int64_t>(1, parallel_items / 2 / std::max<std::int64_t>(items_per_index, 1));
  tbb::parallel_for(tbb::blocked_range<std::int64_t>(0, count, grain),
                    [&](const tbb::blocked_range<std::int64_t>& r) { body(r.begin(), r.end()); });
}

}  // namespace bulkgnn::kernels::cpu
