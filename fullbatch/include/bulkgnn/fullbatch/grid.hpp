#pragma once

#include "bulkgnn/core/grid.hpp"

namespace bulkgnn::fullbatch {

// How full-batch training lays the graph and the activations over P ranks.
// Every grid splits the vertices into parts (contiguous ranges of the
// partition's new ids); a rank computes the layers' dense steps for the rows
// of its part and the grid decides how the sparse step Â·H reaches them:
//  - one_d: CAGNET 1D. Rank r holds the block row Â[F_r, :]; every product
//    all-gathers H.
//  - one_and_half_d: CAGNET 1.5D. P/c parts, each held by a team of c ranks;
//    replica k of a team multiplies by the parts j ≡ k (mod c), which the
//    ranks of replica k broadcast, and the team sums the c partial products.
//  - two_d: stationary-A SUMMA on a q×q grid (P = q²). Rank (a, b) holds the
//    tile Â[R_a, C_b] (R_a: the parts of grid row a, C_b: those of grid
//    column b); grid column b all-gathers H[C_b], grid row a reduce-scatters
//    the partial products back to the parts' ranks.
//  - three_d: c layers of that 2D grid (P = c·q²); each layer carries f/c of
//    the feature columns, and the c ranks of a fiber exchange row blocks for
//    column blocks before and after (an all-to-all), so the sparse step moves
//    1/c of each row through the 2D grid.
//  - sar: SAR's sequential aggregation. Rank r holds Â[F_r, :]; the forward
//    pass fetches the rows of one remote part at a time (only those its rows
//    reference), adds their product, and frees them; the backward pass sends
//    each remote part its share of Âᵀ·G, one part at a time.
// Each grid's ranks sit where rank_grid places them (core/grid.hpp); this
// class adds how full-batch training splits the vertices into parts over
// those positions.
class grid_layout {
 public:
  // option_error naming layout_options.grid for a grid full-batch training
  // does not run on (replicated, 2d-summa), and rank_grid's errors for a rank
  // count the grid cannot take.
  grid_layout(grid_kind kind, int ranks, int replication);

  [[nodiscard]] const rank_grid& grid() const { return grid_; }
  [[nodiscard]] grid_kind kind() const { return grid_.kind(); }
  [[nodiscard]] int ranks() const { return grid_.ranks(); }
  [[nodiscard]] int replication() const { return grid_.replication(); }
  [[nodiscard]] int side() const { return grid_.side(); }
  // Vertex parts: P/c for 1.5d (one per grid row), P for the others.
  [[nodiscard]] int parts() const;
  // The part whose rows rank r computes: 1.5d its grid row; 3d, at (ℓ, a, b),
  // part (a·q + b)·c + ℓ, so that the c parts of a fiber are contiguous, and
  // so are the parts of a grid row; r itself on the others.
  [[nodiscard]] int part_of_rank(int r) const;
  // 1.5d: which copy of its part rank r holds (its layer); 0 elsewhere.
  [[nodiscard]] int replica_of_rank(int r) const;
  // The rank that holds copy `replica` of part p.
  [[nodiscard]] int rank_of_part(int p, int replica = 0) const;

 private:
  rank_grid grid_;
};

}  // namespace bulkgnn::fullbatch
