#pragma once

#include <array>
#include <span>
#include <string>
#include <string_view>

// The one vocabulary for how a run lays the graph over its P ranks (--grid,
// layout_options.grid), shared by minibatch sampling (distributed/), full-batch
// training (fullbatch/), the cost model and every front end, and the one rule
// that places ranks on a grid.
namespace bulkgnn {

//  - replicated: every rank holds all of A (minibatch only).
//  - one_d: rank r holds block row r of A (full-batch: CAGNET 1D).
//  - one_and_half_d: P/c block rows, each held by c ranks (one per replica).
//  - two_d: a q×q grid of blocks (P = q²).
//  - two_d_summa: the same blocks, rows fetched by CombBLAS's SUMMA
//    (minibatch only, for comparison).
//  - three_d: c layers of q×q grids (P = c·q²).
//  - sar: SAR's sequential aggregation over block rows (full-batch only).
// What each mode does on a grid is documented with the mode
// (distributed/sharded_rows.hpp, fullbatch/grid.hpp).
enum class grid_kind { replicated, one_d, one_and_half_d, two_d, two_d_summa, three_d, sar };

// The grids each mode runs on, in the order help and errors list them.
inline constexpr std::array minibatch_grids{grid_kind::replicated, grid_kind::one_and_half_d,
                                            grid_kind::two_d, grid_kind::two_d_summa,
                                            grid_kind::three_d};
inline constexpr std::array full_batch_grids{grid_kind::one_d, grid_kind::one_and_half_d,
                                             grid_kind::two_d, grid_kind::three_d, grid_kind::sar};

// "replicated", "1d", "1.5d", "2d", "2d-summa", "3d", "sar".
[[nodiscard]] std::string grid_kind_name(grid_kind kind);

// "a, b or c": the names of `kinds`, for help and errors.
[[nodiscard]] std::string grid_kind_names(std::span<const grid_kind> kinds);

// option_error naming layout_options.grid and the accepted names unless
// `kind` is among those `mode` (say, "full-batch training") runs on.
void require_grid_kind_in(grid_kind kind, std::span<const grid_kind> accepted,
                          std::string_view mode);

// The kind called `name` among those `mode` runs on, else the same
// option_error.
[[nodiscard]] grid_kind parse_grid_kind(std::string_view name, std::span<const grid_kind> accepted,
                                        std::string_view mode);

// Where rank r sits on its grid: one placement rule for every mode,
//   r = layer·(rows·columns) + row·columns + column,
// so that the ranks of one layer are contiguous. The grid's shape by kind:
//   replicated: P layers (each a whole copy of A) of 1 row, 1 column;
//   1d, sar: 1 layer of P rows, 1 column;
//   1.5d: c layers (the replicas) of P/c rows, 1 column: rank r is replica
//         r / (P/c) of block row r % (P/c);
//   2d, 2d-summa: 1 layer of q rows and q columns;
//   3d: c layers of q rows and q columns.
struct grid_position {
  int layer = 0;
  int row = 0;
  int column = 0;
};

class rank_grid {
 public:
  // option_error naming layout_options.grid or layout_options.replication
  // when P ranks cannot form `kind` with replication c: 1.5d needs c | P, 2d
  // and 2d-summa a square P, 3d P = c·q², and the others c = 1.
  rank_grid(grid_kind kind, int ranks, int replication);

  [[nodiscard]] grid_kind kind() const { return kind_; }
  [[nodiscard]] int ranks() const { return ranks_; }
  // c as given: 1.5d's replicas, 3d's layers; 1 for the other grids.
  [[nodiscard]] int replication() const { return replication_; }
  // Copies of the grid's layout of A: c, or P for replicated.
  [[nodiscard]] int layers() const { return ranks_ / (rows_ * columns_); }
  [[nodiscard]] int rows() const { return rows_; }
  [[nodiscard]] int columns() const { return columns_; }
  // q: the side of the 2D grid (of each layer, for 3d); 1 for the others.
  [[nodiscard]] int side() const { return columns_; }

  [[nodiscard]] grid_position position_of(int rank) const;
  [[nodiscard]] int rank_at(grid_position position) const;

 private:
  grid_kind kind_;
  int ranks_;
  int replication_;
  int rows_;
  int columns_ = 1;
};

}  // namespace bulkgnn
