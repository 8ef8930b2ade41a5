#pragma once

#include "bulkgnn/core/buffer.hpp"
#include "bulkgnn/core/csr.hpp"
#include "bulkgnn/core/dense.hpp"
#include "bulkgnn/core/executor.hpp"
#include "bulkgnn/kernels/spmm.hpp"

#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

// Node features placed where an executor gathers them, with an optional
// cache of hot vertices' rows in faster memory (GPU memory, in front of a
// table in pinned host memory that kernels read through UVA), as Quiver and
// GNNLab cache by degree or by measured access frequency.
namespace bulkgnn::loader {

enum class cache_policy { degree, frequency };

// "degree" or "frequency"; anything else is an option_error naming `option`.
[[nodiscard]] cache_policy parse_cache_policy(std::string_view name, std::string_view option);

// The `count` vertices of highest degree, ties to the lower id, ascending by
// rank (hottest first).
[[nodiscard]] std::vector<vertex_t> hottest_by_degree(csr_view graph, std::int64_t count);

// The `count` vertices counted most often (counts[v] per vertex), ties to
// the lower id, hottest first; vertices counted 0 times are never taken.
[[nodiscard]] std::vector<vertex_t> hottest_by_count(std::span<const std::uint64_t> counts,
                                                     std::int64_t count);

class placed_features {
 public:
  // The whole table in `table` memory (the dataset's own mapping, not a
  // copy, when that is host memory) and copies of the rows of `hot` in
  // `cache` memory; slot_of in `cache` memory too.
  placed_features(dense_view<const float> features, memory_resource& table,
                  std::span<const vertex_t> hot, memory_resource& cache);

  [[nodiscard]] kernels::cached_rows view() const;
  [[nodiscard]] std::int64_t cached_vertices() const { return cache_rows_; }
  [[nodiscard]] memory_space table_space() const { return all_.space; }
  [[nodiscard]] memory_space cache_space() const { return slot_of_.space(); }
  [[nodiscard]] std::int64_t row_bytes() const {
    return all_.cols * static_cast<std::int64_t>(sizeof(float));
  }

 private:
  buffer<float> table_;  // empty when all_ views the caller's features
  dense_view<const float> all_;
  buffer<float> cache_;
  std::int64_t cache_rows_ = 0;
  buffer<std::int32_t> slot_of_;
};

// What gathers from placed features moved, summed over calls.
struct gather_tally {
  std::int64_t rows = 0;
  std::int64_t cache_hits = 0;
  std::int64_t row_bytes = 0;

  // Gathers the features of `vertices` (in memory the executor reaches) into
  // `out` (vertices.size() × cols, executor memory) and counts them.
  void gather(const executor& exec, const placed_features& features,
              std::span<const vertex_t> vertices, dense_view<float> out);
  [[nodiscard]] double hit_rate() const {
    return rows == 0 ? 0.0 : static_cast<double>(cache_hits) / static_cast<double>(rows);
  }
  [[nodiscard]] std::int64_t bytes_from_cache() const { return cache_hits * row_bytes; }
  [[nodiscard]] std::int64_t bytes_from_table() const { return (rows - cache_hits) * row_bytes; }
};

}  // namespace bulkgnn::loader
