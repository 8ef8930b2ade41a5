#pragma once

#include <cstdint>
#include <filesystem>

namespace bulkgnn::data {

// Graph500 R-MAT: 2^scale vertices, edge_factor · 2^scale generated edges with
// quadrant probabilities (a, b, c, d = 1 - a - b - c); vertex labels are
// randomly permuted. Self loops and duplicate edges are dropped.
struct rmat_options {
  int scale = 16;
  int edge_factor = 16;
  double a = 0.57, b = 0.19, c = 0.19;
  bool undirected = false;  // add the reverse of every edge
  int features = 0;         // random N(0,1) features per node when > 0
  int classes = 0;          // random labels and a 60/20/20 split when > 0
  bool weights = false;     // edge weights uniform in (0, 1], equal both ways
  std::uint32_t seed = 0;
  bool quiet = false;
};
void generate_rmat(const std::filesystem::path& out_dir, const rmat_options& options);

// Contextual stochastic block model: `classes` balanced blocks; each node has
// about `average_degree` undirected edges, a fraction `homophily` of them to
// its own class; features are the class mean (a random direction of norm
// `signal`) plus N(0, 1) noise. Labels are learnable from either features or
// edges, best from both. Random 60/20/20 split named "random".
struct csbm_options {
  std::int64_t nodes = 10000;
  int classes = 4;
  double average_degree = 10;
  double homophily = 0.8;
  int features = 32;
  double signal = 1.0;
  std::uint32_t seed = 0;
  bool quiet = false;
};
void generate_csbm(const std::filesystem::path& out_dir, const csbm_options& options);

}  // namespace bulkgnn::data
