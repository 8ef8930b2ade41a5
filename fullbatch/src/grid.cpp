#include "bulkgnn/fullbatch/grid.hpp"

#include "bulkgnn/core/error.hpp"

namespace bulkgnn::fullbatch {

namespace {

rank_grid full_batch_grid(grid_kind kind, int ranks, int replication) {
  require_grid_kind_in(kind, full_batch_grids, "full-batch training");
  return {kind, ranks, replication};
}

}  // namespace

grid_layout::grid_layout(grid_kind kind, int ranks, int replication)
    : grid_(full_batch_grid(kind, ranks, replication)) {}

int grid_layout::parts() const {
  return kind() == grid_kind::one_and_half_d ? grid_.rows() : grid_.ranks();
}

int grid_layout::part_of_rank(int r) const {
  const auto at = grid_.position_of(r);
  switch (kind()) {
    case grid_kind::one_and_half_d:
      return at.row;
    case grid_kind::three_d:
      return (at.row * grid_.columns() + at.column) * grid_.layers() + at.layer;
    default:
      return r;
  }
}

int grid_layout::replica_of_rank(int r) const {
  return kind() == grid_kind::one_and_half_d ? grid_.position_of(r).layer : 0;
}

int grid_layout::rank_of_part(int p, int replica) const {
  switch (kind()) {
    case grid_kind::one_and_half_d:
      return grid_.rank_at({.layer = replica, .row = p, .column = 0});
    case grid_kind::three_d: {
      const int cell = p / grid_.layers();
      return grid_.rank_at({.layer = p % grid_.layers(),
                            .row = cell / grid_.columns(),
                            .column = cell % grid_.columns()});
    }
    default:
      return p;
  }
}

}  // namespace bulkgnn::fullbatch
