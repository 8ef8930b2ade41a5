#pragma once

#include "bulkgnn/core/csr.hpp"
#include "bulkgnn/core/executor.hpp"
#include "bulkgnn/core/rng.hpp"
#include "bulkgnn/core/segmented.hpp"

#include <cstdint>
#include <span>
#include <vector>

namespace bulkgnn::kernels {

enum class replacement { without, with };
enum class weighting { uniform, by_value };

struct row_sampling_options {
  // Entries drawn per row; -1 takes every entry. Without replacement a row with
  // no more than `fanout` entries is taken whole.
  std::int64_t fanout = -1;
  replacement mode = replacement::without;
  // by_value draws entries with probability proportional to their (positive)
  // values; without replacement this is successive sampling, as
  // numpy.random.choice(replace=False, p=...) does. A pattern `a` has no
  // values and samples as with weighting::uniform.
  weighting weights = weighting::uniform;
};

// Keys the random stream of each sampled row: output row i draws from
// rng_key{seed, epoch, minibatch_of_row[i], layer, key_rows[i]}, where
// key_rows defaults to the sampled rows themselves. Layer-wise samplers draw
// from a per-bulk matrix whose row numbers depend on the bulk, so they key
// by minibatch alone (key_rows all zero).
struct row_streams {
  std::uint32_t seed = 0;
  std::uint32_t epoch = 0;
  std::uint32_t layer = 0;
  std::span<const std::uint32_t> minibatch_of_row;
  std::span<const vertex_t> key_rows = {};

  [[nodiscard]] rng_key key(std::size_t i, std::span<const vertex_t> rows) const {
    const vertex_t row = key_rows.empty() ? rows[i] : key_rows[i];
    return {seed, epoch, minibatch_of_row[i], layer, static_cast<std::uint32_t>(row)};
  }
};

// Draws entries from the rows rows[i] of `a` (the virtual selection product
// Q·A, never materialised). Output row i holds the drawn column ids of row
// rows[i] in the order they are stored in `a` (draws with replacement repeat),
// and their values when `a` has values. Only the rows named are read, so the
// column indices of `a` are not validated here (they are trusted, as checked
// when the graph was built).
[[nodiscard]] csr_matrix sample_rows(const executor& exec, csr_view a,
                                     std::span<const vertex_t> rows, const row_streams& streams,
                                     const row_sampling_options& options);

// LABOR-0's draw (Balin and Çatalyürek, "Layer-Neighbor Sampling",
// NeurIPS 2023): every column t of a minibatch draws one variate r_t,
// uniform in (0, 1), from the stream streams.key would give a row t
// (rng_key{seed, epoch, minibatch_of_row[i], layer, t}; streams.key_rows is
// not used), and output row i takes the entries t of row rows[i] with
// r_t < fanout / degree: every entry when the degree is at most `fanout`.
// Each entry is taken with probability min(1, fanout / degree), as node-wise
// sampling takes it, but the rows of one minibatch share their columns'
// variates, so rows that share a neighbour mostly agree on it and the
// minibatch holds fewer distinct vertices. Rows hold their entries in stored
// order, without values.
[[nodiscard]] csr_matrix sample_rows_with_shared_variates(const executor& exec, csr_view a,
                                                          std::span<const vertex_t> rows,
                                                          const row_streams& streams,
                                                          std::int64_t fanout);

// LABOR-i's draw (Balin and Çatalyürek 2023, §3.2; DGL's LaborSampler with
// importance_sampling=i): the rows of segment m of `rows` (one minibatch's
// frontier) share importances π_t of the columns they reach, and row s keeps
// column t iff r_t < c_s·π_t, r_t the variate sample_rows_with_shared_variates
// gives t, c_s the scale with Σ_t min(1, c_s·π_t) = fanout
// (rules/labor_importance.hpp). π starts at 1 (LABOR-0's draw) and takes
// `iterations` fixed-point steps π_t ← π_t·max_s c_s, or with -1 steps until
// one lowers the segment's expected count of distinct columns Σ_t min(1,
// π_t·max_s c_s) by less than rules::labor_tolerance, or not at all (LABOR-*; at most
// rules::labor_iteration_limit). A row with no more than `fanout` entries
// keeps them all. Kept entries are in stored order, their values the
// Horvitz–Thompson weights 1 / min(1, c_s·π_t). Each segment's sums run in a
// fixed order, so every back end and thread count gives the same bits.
[[nodiscard]] csr_matrix sample_rows_with_importance(const executor& exec, csr_view a,
                                                     const segmented_vertices& rows,
                                                     const row_streams& streams,
                                                     std::int64_t fanout, std::int64_t iterations);

// The variate LABOR-0 gives column t in the stream of `key`'s minibatch and
// layer (key.row is replaced by t).
[[nodiscard]] BULKGNN_HOST_DEVICE inline double shared_variate(rng_key key, vertex_t t) {
  key.row = static_cast<std::uint32_t>(t);
  return philox_stream(key).uniform_open01();
}

// An entry that weighted sampling without replacement may take from a row
// whose entries are split over ranks by column, with the key that decides it.
struct keyed_entry {
  double key = 0;             // the entry's exponential variate / its value
  std::int64_t position = 0;  // its position in the whole row
  std::int64_t row = 0;       // the output row it may go to
  vertex_t column = 0;
  float value = 0;
};

// One rank's candidates for weighted sampling without replacement (what
// sample_rows draws with weighting::by_value) of rows split by column over
// ranks. a.row(rows[i]) holds this rank's entries of output row i, which are
// the entries at positions first_position[i], first_position[i] + 1, ... of
// the whole row; each gets the key that sample_rows gives the entry at that
// position of the whole row. Returns, for each row, its `fanout` entries of
// smallest (key, position), or all of them if it has no more; rows ascending,
// then positions ascending. The whole row's draw is the fanout smallest of
// every rank's candidates (take_smallest_keys), so no rank reads the entries
// of another.
[[nodiscard]] std::vector<keyed_entry> smallest_keyed_entries(
    const executor& exec, csr_view a, std::span<const vertex_t> rows,
    std::span<const std::int64_t> first_position, const row_streams& streams, std::int64_t fanout);

// Row i holds the `fanout` candidates of row i with the smallest (key,
// position), or all of them if there are no more, in position order, with
// their values: the rows sample_rows draws from the whole rows, given every
// rank's smallest_keyed_entries in any order.
[[nodiscard]] csr_matrix take_smallest_keys(const executor& exec,
                                            std::span<const keyed_entry> candidates,
                                            std::int64_t rows, std::int64_t cols,
                                            std::int64_t fanout);

}  // namespace bulkgnn::kernels
