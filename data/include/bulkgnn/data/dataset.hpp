#pragma once

#include "bulkgnn/core/csr.hpp"
#include "bulkgnn/core/dense.hpp"
#include "bulkgnn/core/interrupt.hpp"
#include "bulkgnn/data/npy.hpp"
#include "bulkgnn/data/ogb_import.hpp"

#include <nlohmann/json.hpp>

#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace bulkgnn::data {

struct split {
  std::string name;
  std::span<const vertex_t> train;
  std::span<const vertex_t> valid;
  std::span<const vertex_t> test;
};

// A dataset's arrays held in memory by its caller (Python's numpy arrays or
// tensors): the dataset views them and copies nothing but an edge list, which
// it turns into CSR. `owner` keeps the viewed memory alive as long as the
// dataset lives.
struct memory_arrays {
  std::string name = "in-memory";
  // -1: the features' rows, else the labels' count, else the graph's.
  std::int64_t num_nodes = -1;
  // The graph, either as CSR (row v holds the in-neighbours of v, each row's
  // columns ascending) or, with edge_list set, as an edge list (edge i goes
  // from source[i] to target[i]: source[i] joins row target[i], as PyG's
  // edge_index reads; it may be empty).
  bool edge_list = false;
  std::span<const edge_t> indptr;
  std::span<const vertex_t> indices;
  std::span<const std::int64_t> source;
  std::span<const std::int64_t> target;
  bool add_inverse_edges = false;        // an edge list's reverse edges too
  std::span<const float> edge_weight;    // optional: one per CSR entry or edge
  dense_view<const float> features;      // optional
  std::span<const std::int32_t> labels;  // optional; -1 = unlabelled
  int num_classes = 0;                   // 0: 1 + the largest label
  std::vector<split> splits;             // views, each name once
  std::shared_ptr<const void> owner;
};

// A graph with optional node features, labels and splits, in bulkgnn's native
// layout: a directory of .npy arrays plus manifest.json, memory-mapped.
//
//   manifest.json          {"format": "bulkgnn-native", "version": 1, ...}
//   indptr.npy   int64 [n+1]   row v holds the in-neighbours of v
//   indices.npy  int32 [m]     (messages flow column -> row)
//   edge_weight.npy float32 [m]          optional
//   features.npy float32 [n, f]          optional
//   labels.npy   int32 [n], -1 = none    optional
//   split/NAME/{train,valid,test}.npy  int32 node ids
class dataset {
 public:
  // Opens a native directory, or an OGB raw directory (imported on the fly
  // into a temporary native directory that is deleted once mapped, with
  // `ogb`'s options), and validates it, so that no command computes on a
  // malformed dataset. option_error naming ogb_import_options.add_inverse_edges
  // where it is set for a native directory, whose edges are as converted.
  static dataset open(const std::filesystem::path& dir, const ogb_import_options& ogb = {});
  static dataset open_native(const std::filesystem::path& dir);
  // A dataset over arrays in memory, checked by validate() as a directory's
  // are; data_error naming the array (say, "labels (in memory)") otherwise.
  static dataset from_memory(memory_arrays arrays);

  [[nodiscard]] const std::string& name() const { return name_; }
  [[nodiscard]] std::int64_t num_nodes() const { return graph_.rows; }
  [[nodiscard]] edge_t num_edges() const { return graph_.nnz(); }
  [[nodiscard]] csr_view graph() const { return graph_; }
  [[nodiscard]] dense_view<const float> features() const { return features_; }
  [[nodiscard]] std::span<const std::int32_t> labels() const { return labels_; }
  [[nodiscard]] int num_classes() const { return num_classes_; }
  [[nodiscard]] const std::vector<split>& splits() const { return splits_; }
  // The named split, or the first one if name is empty; option_error listing
  // the available splits if there is none of that name.
  [[nodiscard]] const split& find_split(const std::string& name) const;
  // The seeds of a sampling epoch: the named split's training vertices, or
  // every vertex of a dataset without splits (then `split_name` must be empty).
  [[nodiscard]] std::vector<vertex_t> training_vertices(const std::string& split_name) const;
  [[nodiscard]] const nlohmann::json& manifest() const { return manifest_; }
  // For a graph built from an edge list (from_memory): the number of the
  // edge (its position in the list) that each CSR entry comes from, an
  // inverse entry its edge's; empty otherwise, and for a list already in CSR
  // order, where an entry's number is its CSR position. What PyG's e_id
  // indexes (8 bytes per entry, as PyG keeps).
  [[nodiscard]] std::span<const std::int64_t> edge_numbers() const {
    return edge_numbers_ ? std::span<const std::int64_t>(*edge_numbers_)
                         : std::span<const std::int64_t>{};
  }

  // Full check of every array (one parallel pass each, O(nodes + edges +
  // features)), which opening runs: a non-decreasing indptr, column ids in
  // [0, num_nodes), finite edge weights and features, labels in
  // [-1, num_classes), split ids in [0, num_nodes) with no node twice in a
  // split. Throws data_error naming the offending file.
  void validate() const;

 private:
  static dataset read_native(const std::filesystem::path& dir);
  // What an error about array `file` (say, "labels.npy") names: its path, or
  // for a dataset in memory the array.
  [[nodiscard]] std::filesystem::path where(const std::string& file) const;

  std::filesystem::path dir_;  // empty for a dataset in memory
  std::string name_;
  nlohmann::json manifest_;
  std::vector<npy_array> arrays_;  // keeps the mappings alive
  csr_view graph_;
  dense_view<const float> features_;
  std::span<const std::int32_t> labels_;
  int num_classes_ = 0;
  std::vector<split> splits_;
  // A dataset in memory: its caller's arrays, and the CSR built from an edge
  // list.
  std::shared_ptr<const void> memory_owner_;
  std::shared_ptr<const csr_matrix> built_graph_;
  std::shared_ptr<const std::vector<std::int64_t>> edge_numbers_;
};

// Writes a native dataset directory atomically: arrays go into a temporary
// sibling directory which commit() renames to the final path (replacing an
// existing dataset there). Destroying an uncommitted writer removes the
// temporary directory, so a failed conversion leaves nothing half-written.
// A writer is an interrupt_scope from before its directory exists until after
// it is removed, so SIGINT/SIGTERM never kill the process in between.
class native_writer {
 public:
  // `format` names the layout in manifest.json ("bulkgnn-partition" for
  // partitioned datasets).
  explicit native_writer(std::filesystem::path final_dir, std::string format = "bulkgnn-native");
  ~native_writer();
  native_writer(const native_writer&) = delete;
  native_writer& operator=(const native_writer&) = delete;

  // Creates a zero-filled array at `relative_path` (e.g. "indices.npy",
  // "split/random/train.npy") inside the temporary directory.
  npy_array create(const std::string& relative_path, dtype type, std::vector<std::int64_t> shape);

  // Writes manifest.json (the caller's fields plus format, version and the
  // list of arrays), flushes every array and renames into place.
  void commit(nlohmann::json manifest);

  [[nodiscard]] const std::filesystem::path& temporary_dir() const { return tmp_dir_; }

 private:
  interrupt_scope polled_;  // first: opened before, closed after the directory
  std::filesystem::path final_dir_;
  std::string format_;
  std::filesystem::path tmp_dir_;
  // The output's ancestors this writer created, deepest first: removed again
  // (when empty) if it is never committed.
  std::vector<std::filesystem::path> created_parents_;
  std::vector<std::string> array_paths_;  // relative, in creation order
  bool committed_ = false;
};

// True if `dir` looks like an OGB node-property raw directory: something is
// where raw/edge.csv.gz or raw/data.npz should be.
[[nodiscard]] bool is_ogb_raw_dir(const std::filesystem::path& dir);

}  // namespace bulkgnn::data
