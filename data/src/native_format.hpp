#pragma once

// What the readers of bulkgnn's directory formats share: the native dataset
// (dataset.cpp) and the partitioned dataset (partitioned_dataset.cpp) hold
// the same kinds of arrays and check them the same way.

#include "bulkgnn/core/error.hpp"
#include "bulkgnn/data/dataset.hpp"
#include "bulkgnn/data/npy.hpp"

#include <nlohmann/json.hpp>

#include <oneapi/tbb/blocked_range.h>
#include <oneapi/tbb/parallel_reduce.h>

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <span>
#include <string>
#include <vector>

namespace bulkgnn::data::detail {

inline constexpr const char* manifest_name = "manifest.json";

// manifest.json of a directory of `format`, version 1; data_error naming the
// file otherwise.
[[nodiscard]] nlohmann::json read_manifest(const std::filesystem::path& path, const char* format);

void check_shape(const npy_array& a, const std::vector<std::int64_t>& expected);

template <class T>
std::span<const T> typed(const npy_array& a, const std::vector<std::int64_t>& shape) {
  check_shape(a, shape);
  return a.as<const T>();
}

// The manifest's non-negative integer `key`, or 0 if absent and not required.
[[nodiscard]] std::int64_t manifest_count(const nlohmann::json& m, const char* key,
                                          const std::filesystem::path& path, bool required);

// The smallest i in [0, count) with bad(i), or count if there is none; one
// parallel pass, so that validating a large graph costs a fraction of a read.
template <class Predicate>
std::int64_t first_where(std::int64_t count, const Predicate& bad) {
  return tbb::parallel_reduce(
      tbb::blocked_range<std::int64_t>(0, count, std::int64_t{1} << 16), count,
      [&](const tbb::blocked_range<std::int64_t>& range, std::int64_t found) {
        for (auto i = range.begin(); i != range.end() && i < found; ++i)
          if (bad(i)) return i;
        return found;
      },
      [](std::int64_t a, std::int64_t b) { return std::min(a, b); });
}

// data_error naming `dir` unless it is a directory: "no such directory"
// rather than a missing file inside it.
void require_directory(const std::filesystem::path& dir);

void check_finite(std::span<const float> values, const std::filesystem::path& path);

// A path from manifest.json must name a file inside the dataset directory.
void check_inside_dataset(const std::string& relative, const std::filesystem::path& manifest_path,
                          const char* field);

// Row pointer of `rows` rows over `entries` entries: starts at 0, ends at
// `entries`, never decreases.
void check_row_pointer(std::span<const edge_t> indptr, edge_t entries,
                       const std::filesystem::path& path);

// Every column id in [0, columns).
void check_column_ids(std::span<const vertex_t> indices, std::int64_t columns,
                      const std::filesystem::path& path);

// Column ids sorted within each row (repeats allowed), as the native format
// says and the layer-wise samplers' sparse sums need; `path` is indices.npy.
void check_sorted_rows(std::span<const edge_t> indptr, std::span<const vertex_t> indices,
                       const std::filesystem::path& path);

// Edge weights that weighted sampling can draw by: every one positive and
// finite; `path` is edge_weight.npy.
void check_edge_weights(std::span<const edge_t> indptr, std::span<const float> weights,
                        const std::filesystem::path& path);

void check_labels(std::span<const std::int32_t> labels, int num_classes,
                  const std::filesystem::path& path);

// Sorts each row's column ids ascending, in parallel over the rows; weights
// and edge numbers (each empty for none) travel with their columns, and
// equal columns keep their order.
void sort_rows(std::span<const edge_t> indptr, std::span<vertex_t> indices,
               std::span<float> weights, std::span<std::int64_t> edge_numbers = {});

// The splits named in the manifest's "splits", mapped from split/NAME/*.npy.
// `load` maps one relative path (and keeps the mapping alive).
template <class Load>
std::vector<split> read_splits(const nlohmann::json& manifest,
                               const std::filesystem::path& manifest_path, Load load) {
  std::vector<split> splits;
  const auto names = manifest.value("splits", std::vector<std::string>{});
  for (const auto& name : names) check_inside_dataset(name, manifest_path, "\"splits\"");
  for (const auto& name : names) {
    split s{name, {}, {}, {}};
    for (auto [part, span] :
         {std::pair{"train", &s.train}, {"valid", &s.valid}, {"test", &s.test}}) {
      const npy_array& a = load("split/" + name + "/" + part + ".npy");
      if (a.shape().size() != 1) throw data_error(a.path().string(), "is not one-dimensional");
      *span = a.template as<const vertex_t>();
    }
    splits.push_back(std::move(s));
  }
  return splits;
}

// Node ids in [0, num_nodes), none twice in a split (dir/split/NAME/*.npy).
void validate_split(const split& s, std::int64_t num_nodes, const std::filesystem::path& dir);

[[nodiscard]] const split& find_split(const std::vector<split>& splits, const std::string& name,
                                      const std::string& dataset_name);

[[nodiscard]] std::vector<vertex_t> training_vertices(const std::vector<split>& splits,
                                                      std::int64_t num_nodes,
                                                      const std::string& split_name,
                                                      const std::string& dataset_name);

}  // namespace bulkgnn::data::detail
