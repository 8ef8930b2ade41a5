#pragma once

#include "bulkgnn/core/csr.hpp"
#include "bulkgnn/core/dense.hpp"
#include "bulkgnn/data/dataset.hpp"
#include "bulkgnn/data/npy.hpp"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <filesystem>
#include <span>
#include <string>
#include <vector>

namespace bulkgnn::data {

// A dataset split by vertex owner into parts that ranks read alone
// (`bulkgnn partition`), so that a rank maps its part's rows of A and of the
// features and nothing else of them. What every rank needs whole is small
// (4 bytes per vertex each): the owner of every vertex, the labels, the splits.
//
//   manifest.json   {"format": "bulkgnn-partition", "version": 1, "parts": P,
//                    "num_nodes", "num_edges", "num_features", "num_classes",
//                    "weighted", "part_vertices": [P], "part_edges": [P],
//                    "partition": {"method", "seed", "edge_cut"},
//                    "source": {"name", "fingerprint"}, "splits": [...]}
//   owner.npy              int32 [n]        the part of each vertex
//   in_degree.npy          int64 [n]        entries of each column of A
//   labels.npy             int32 [n]        optional
//   split/NAME/{train,valid,test}.npy       as in a native dataset
//   part-K/indptr.npy      int64 [n_K + 1]  the rows of part K's vertices,
//   part-K/indices.npy     int32 [m_K]      ascending by vertex id, with the
//   part-K/edge_weight.npy float32 [m_K]    whole graph's column ids
//   part-K/features.npy    float32 [n_K, f]
//
// Row r of part K is the vertex with the r-th smallest id among those that
// owner.npy gives K (distributed::vertex_partition's local index).
struct partition_provenance {
  std::string method;  // block or metis
  int seed = 0;
  edge_t edge_cut = 0;
};

// Writes `ds` split by `owner` (a part in [0, parts) per vertex) to `out`
// atomically (a temporary sibling renamed into place), one part at a time.
void write_partitioned_dataset(const dataset& ds, std::span<const std::int32_t> owner, int parts,
                               const partition_provenance& how, const std::filesystem::path& out);

// True if `dir` holds a partitioned dataset's manifest.json.
[[nodiscard]] bool is_partitioned_dataset(const std::filesystem::path& dir);

// The number of parts, from manifest.json alone.
[[nodiscard]] int partitioned_dataset_parts(const std::filesystem::path& dir);

// Rows of the features of one part, mapped (empty without features).
struct mapped_feature_rows {
  npy_array array;  // keeps the mapping alive
  dense_view<const float> rows;
};

// One part of a partitioned dataset, memory-mapped: the part's own files and
// the whole small arrays, nothing of the other parts. Opening checks the
// manifest's counts (one per part, summing to the dataset's) and all it maps
// as dataset::open does (row pointer, column ids, finite weights and
// features, labels, splits, owners in range and part K's size), throwing
// data_error naming the file.
class dataset_shard {
 public:
  // Without `with_features` the part's feature rows are not mapped
  // (features() is empty; feature_rows_of maps any part's on demand).
  static dataset_shard open(const std::filesystem::path& dir, int part, bool with_features = true);

  [[nodiscard]] const std::string& name() const { return name_; }
  [[nodiscard]] int parts() const { return parts_; }
  [[nodiscard]] int part() const { return part_; }
  [[nodiscard]] std::int64_t num_nodes() const { return rows_.cols; }
  [[nodiscard]] edge_t num_edges() const { return num_edges_; }
  // Part K's rows of A: n_K rows, num_nodes() columns.
  [[nodiscard]] csr_view rows() const { return rows_; }
  // Whether A carries edge weights (a part may hold no entries, and so no
  // weights, in a weighted graph).
  [[nodiscard]] bool weighted() const { return weighted_; }
  // Part K's rows of the features (n_K × f; empty without features).
  [[nodiscard]] dense_view<const float> features() const { return features_; }
  [[nodiscard]] std::int64_t feature_dim() const { return feature_dim_; }
  // The part of every vertex, read from owner.npy into memory that the caller
  // owns (4 bytes per vertex): a rank keeps one copy, not a mapping besides.
  [[nodiscard]] std::vector<std::int32_t> owners() const;
  [[nodiscard]] std::span<const std::int32_t> labels() const { return labels_; }
  [[nodiscard]] int num_classes() const { return num_classes_; }
  [[nodiscard]] const std::vector<split>& splits() const { return splits_; }
  // As dataset::training_vertices and dataset::find_split.
  [[nodiscard]] std::vector<vertex_t> training_vertices(const std::string& split_name) const;
  [[nodiscard]] const split& find_split(const std::string& name) const;
  // The feature rows of another part (a rank whose feature group position
  // differs from its grid part), checked as the own part's are.
  [[nodiscard]] mapped_feature_rows feature_rows_of(int part) const;
  // The in-degree of every vertex, read into memory the caller owns (8 bytes
  // per vertex): what a feature cache by degree ranks vertices by.
  [[nodiscard]] std::vector<std::int64_t> in_degrees() const;
  // The same on every part of one partitioned dataset, different for another
  // partition or source dataset: what ranks agree on before a run.
  [[nodiscard]] std::string fingerprint() const { return fingerprint_; }
  [[nodiscard]] const nlohmann::json& manifest() const { return manifest_; }

 private:
  std::string name_;
  int parts_ = 1;
  int part_ = 0;
  edge_t num_edges_ = 0;
  std::int64_t feature_dim_ = 0;
  int num_classes_ = 0;
  bool weighted_ = false;
  nlohmann::json manifest_;
  std::string fingerprint_;
  std::vector<npy_array> arrays_;  // keeps the mappings alive
  csr_view rows_;
  dense_view<const float> features_;
  std::filesystem::path dir_;
  std::span<const std::int32_t> labels_;
  std::vector<split> splits_;
};

}  // namespace bulkgnn::data
