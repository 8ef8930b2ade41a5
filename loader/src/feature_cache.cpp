#include "bulkgnn/loader/feature_cache.hpp"

#include "bulkgnn/core/error.hpp"

#include <algorithm>
#include <numeric>

namespace bulkgnn::loader {
namespace {

// The `count` ids of largest score (ties to the lower id), hottest first,
// leaving out ids whose score is 0 when `skip_zero`.
template <class Score>
std::vector<vertex_t> top_by_score(std::int64_t n, std::int64_t count, Score&& score,
                                   bool skip_zero) {
  std::vector<vertex_t> ids(static_cast<std::size_t>(n));
  std::iota(ids.begin(), ids.end(), 0);
  if (skip_zero) std::erase_if(ids, [&](vertex_t v) { return score(v) == 0; });
  const auto take = std::min<std::int64_t>(count, static_cast<std::int64_t>(ids.size()));
  const auto hotter = [&](vertex_t a, vertex_t b) {
    return score(a) != score(b) ? score(a) > score(b) : a < b;
  };
  std::partial_sort(ids.begin(), ids.begin() + take, ids.end(), hotter);
  ids.resize(static_cast<std::size_t>(take));
  return ids;
}

}  // namespace

cache_policy parse_cache_policy(std::string_view name, std::string_view option) {
  if (name == "degree") return cache_policy::degree;
  if (name == "frequency") return cache_policy::frequency;
  throw option_error(
      fmt::format("{}: expected degree or frequency, got '{}'", option, std::string(name)));
}

std::vector<vertex_t> hottest_by_degree(csr_view graph, std::int64_t count) {
  BULKGNN_EXPECTS(count >= 0, "hottest_by_degree: count is {}", count);
  return top_by_score(
      graph.rows, count, [&](vertex_t v) { return graph.degree(v); }, false);
}

std::vector<vertex_t> hottest_by_count(std::span<const std::uint64_t> counts, std::int64_t count) {
  BULKGNN_EXPECTS(count >= 0, "hottest_by_count: count is {}", count);
  return top_by_score(
      static_cast<std::int64_t>(counts.size()), count, [&](vertex_t v) { return counts[v]; }, true);
}

placed_features::placed_features(dense_view<const float> features, memory_resource& table,
                                 std::span<const vertex_t> hot, memory_resource& cache)
    : cache_(cache), slot_of_(cache) {
  BULKGNN_EXPECTS(host_accessible(features.space),
                  "placed_features: the features must be in host-readable memory");
  if (table.space() == memory_space::host) {
    all_ = features;
  } else {
    table_ = copy_to(std::span<const float>(features.data), table);
    all_ = {features.rows, features.cols, std::span<const float>(table_), table_.space()};
  }
  std::vector<std::int32_t> slot_of(static_cast<std::size_t>(features.rows), -1);
  std::vector<float> rows(hot.size() * static_cast<std::size_t>(features.cols));
  for (std::size_t slot = 0; slot < hot.size(); ++slot) {
    const vertex_t v = hot[slot];
    BULKGNN_EXPECTS(v >= 0 && v < features.rows && slot_of[v] == -1,
                    "placed_features: hot vertex {} is out of range or repeated", v);
    slot_of[v] = static_cast<std::int32_t>(slot);
    const auto row = features.row(v);
    std::copy(row.begin(), row.end(),
              rows.begin() + static_cast<std::ptrdiff_t>(slot) * features.cols);
  }
  cache_ = copy_to(std::span<const float>(rows), cache);
  cache_rows_ = static_cast<std::int64_t>(hot.size());
  slot_of_ = copy_to(std::span<const std::int32_t>(slot_of), cache);
}

kernels::cached_rows placed_features::view() const {
  return {all_,
          {cache_rows_, all_.cols, std::span<const float>(cache_), cache_.space()},
          std::span<const std::int32_t>(slot_of_)};
}

void gather_tally::gather(const executor& exec, const placed_features& features,
                          std::span<const vertex_t> vertices, dense_view<float> out) {
  cache_hits += kernels::gather_cached_rows(exec, features.view(), vertices, out);
  rows += static_cast<std::int64_t>(vertices.size());
  row_bytes = features.row_bytes();
}

}  // namespace bulkgnn::loader
