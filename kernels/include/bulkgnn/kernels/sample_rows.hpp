#pragma once

#include "bulkgnn/core/csr.hpp"
#include "bulkgnn/core/rng.hpp"
#include "bulkgnn/core/executor.hpp"

#include <cstdint>
#include <span>

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

}  // namespace bulkgnn::kernels
