#pragma once

#include "bulkgnn/core/csr.hpp"
#include "bulkgnn/core/types.hpp"

#include <cstdint>
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

}  // namespace bulkgnn::data
