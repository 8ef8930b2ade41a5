#pragma once

#include <string>
#include <vector>

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
enum class grid_kind { one_d, one_and_half_d, two_d, three_d, sar };

// "1d", "1.5d", "2d", "3d", "sar"; anything else is an option_error naming
// --grid.
[[nodiscard]] grid_kind parse_grid_kind(const std::string& name);
[[nodiscard]] std::string grid_kind_name(grid_kind kind);

class grid_layout {
 public:
  // option_error naming --grid or --replication when the rank count cannot
  // take the grid: 2d needs a square P, 3d P = c·q², 1.5d c dividing P, and
  // c is 1 for the other grids.
  grid_layout(grid_kind kind, int ranks, int replication);

  [[nodiscard]] grid_kind kind() const { return kind_; }
  [[nodiscard]] int ranks() const { return ranks_; }
  [[nodiscard]] int replication() const { return replication_; }
  // q: the side of the 2D grid (of each layer, for 3d); 1 otherwise.
  [[nodiscard]] int side() const { return side_; }
  // Vertex parts: P/c for 1.5d, P for the others.
  [[nodiscard]] int parts() const;
  // The part whose rows rank r computes (1.5d: its team's).
  [[nodiscard]] int part_of_rank(int r) const;
  // The rank that holds part p (1.5d: the team's replica 0).
  [[nodiscard]] int rank_of_part(int p) const;

 private:
  grid_kind kind_;
  int ranks_;
  int replication_;
  int side_ = 1;
};

}  // namespace bulkgnn::fullbatch
