#pragma once

#include "bulkgnn/core/csr.hpp"
#include "bulkgnn/core/types.hpp"

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

// A random split of a graph's edges for link prediction, as PyG's
// RandomLinkSplit makes it: held-out valid and test edges, the graph the
// model passes messages over at each stage, and fixed negatives for
// evaluation.
namespace bulkgnn::data {

struct link_split_options {
  double valid_fraction = 0.1;
  double test_fraction = 0.2;
  // Evaluation negatives per held-out positive: pairs that are no edge of
  // the whole graph and no loop.
  double negatives_per_positive = 1;
  std::uint32_t seed = 0;
};

// Edges as parallel arrays: edge i is source[i] → target[i].
struct edge_arrays {
  std::vector<vertex_t> source;
  std::vector<vertex_t> target;

  [[nodiscard]] std::int64_t size() const { return static_cast<std::int64_t>(source.size()); }
  void push_back(vertex_t s, vertex_t t) {
    source.push_back(s);
    target.push_back(t);
  }
};

// Each held-out positive's own negative targets (ogbl-citation2's
// target_node_neg): positive i's are targets[i·per_positive, (i + 1)·per_positive),
// each scored as (its source, target) against it for MRR.
struct negative_targets {
  std::vector<vertex_t> targets;
  std::int64_t per_positive = 0;  // 0: none (MRR draws its own tails)

  [[nodiscard]] bool empty() const { return targets.empty(); }
};

struct link_split {
  // True when every edge's reverse is an edge (the graph stores undirected
  // edges both ways): then each undirected edge is split once, listed with
  // its smaller endpoint as the source, and a message-passing graph holds
  // both directions of the edges it keeps.
  bool undirected = false;
  edge_arrays train;  // supervision edges for training
  edge_arrays valid;
  edge_arrays test;
  edge_arrays valid_negatives;
  edge_arrays test_negatives;
  // Only from a stored split (random_link_split draws none).
  negative_targets valid_negative_targets;
  negative_targets test_negative_targets;
  // Held-out positives that messages pass over (read_link_split counts
  // them; a random split has none): valid edges that are also training
  // edges, test edges that are also training or valid edges.
  std::int64_t valid_in_training = 0;
  std::int64_t test_in_training_or_valid = 0;
  // What messages pass over (in-neighbour CSR, sorted rows): the training
  // edges while training and validating; the training and valid edges while
  // testing (PyG's val_data and test_data edge_index).
  csr_matrix train_graph;
  csr_matrix test_graph;
};

// The split of `graph` (in-neighbour CSR, sorted rows; a loop is never a
// supervision edge and stays out of every graph): a shuffle keyed on the
// seed alone puts the first test_fraction of the edges in test, the next
// valid_fraction in valid and the rest in train (PyG rounds the same way:
// floor of each fraction times the edges). option_error naming
// link_split_options' field for impossible fractions, or for negatives that
// the graph is too dense to give.
[[nodiscard]] link_split random_link_split(csr_view graph, const link_split_options& options);

// A link split kept as a directory of its own (`bulkgnn split-links`;
// Python's bulkgnn.save_link_split, which also stores OGB's ogbl-* splits):
// train.npy, valid.npy, test.npy, valid_negatives.npy and
// test_negatives.npy, each int32 [2, E] (sources, then targets; negatives
// may be empty), optionally valid_negative_targets.npy and
// test_negative_targets.npy, int32 [P, K] (each held-out positive's own K
// negative targets, ogbl-citation2's), and manifest.json (format
// "bulkgnn-link-split", num_nodes, each edge list's E, each target array's
// [P, K]). It lives apart from the dataset, so that a split of a read-only
// or OGB raw directory need not be written into it.

// Checks `split` against `graph` (the checks read_link_split makes, the
// messages naming `where`), then writes its five edge lists to `dir`
// atomically (a temporary sibling renamed into place).
void write_link_split(const std::filesystem::path& dir, const link_split& split, csr_view graph);

// The split stored at `dir`, for `graph`: undirected as random_link_split
// decides it (every edge's reverse an edge), the message-passing graphs made
// as it makes them (from the training edges, and the valid ones for test;
// an edge listed in both directions counts once). data_error naming the
// file and entry for a missing or malformed array, a manifest for another
// vertex count, a vertex outside the graph, a loop among the positives, or
// a training edge that is no edge of `graph`. Held-out positives that are
// also edges messages pass over are counted (valid_in_training,
// test_in_training_or_valid), not refused: OGB's ogbl-collab has them.
[[nodiscard]] link_split read_link_split(const std::filesystem::path& dir, csr_view graph);

}  // namespace bulkgnn::data
