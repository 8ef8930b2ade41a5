#include "bulkgnn/fullbatch/grid.hpp"

#include "bulkgnn/core/error.hpp"

#include <cmath>

namespace bulkgnn::fullbatch {

namespace {

// q with q·q == n, or 0.
int exact_square_root(int n) {
  auto q = static_cast<int>(std::lround(std::sqrt(static_cast<double>(n))));
  return q * q == n ? q : 0;
}

}  // namespace

grid_kind parse_grid_kind(const std::string& name) {
  if (name == "1d") return grid_kind::one_d;
  if (name == "1.5d") return grid_kind::one_and_half_d;
  if (name == "2d") return grid_kind::two_d;
  if (name == "3d") return grid_kind::three_d;
  if (name == "sar") return grid_kind::sar;
  throw option_error(
      fmt::format("--grid {}: full-batch training takes 1d, 1.5d, 2d, 3d or sar", name));
}

std::string grid_kind_name(grid_kind kind) {
  switch (kind) {
    case grid_kind::one_d:
      return "1d";
    case grid_kind::one_and_half_d:
      return "1.5d";
    case grid_kind::two_d:
      return "2d";
    case grid_kind::three_d:
      return "3d";
    case grid_kind::sar:
      return "sar";
  }
  return "?";
}

grid_layout::grid_layout(grid_kind kind, int ranks, int replication)
    : kind_(kind), ranks_(ranks), replication_(replication) {
  const auto name = grid_kind_name(kind);
  BULKGNN_EXPECTS(ranks >= 1, "full-batch --grid {}: {} ranks", name, ranks);
  BULKGNN_EXPECTS(replication >= 1, "--replication {}: must be at least 1", replication);
  switch (kind) {
    case grid_kind::one_d:
    case grid_kind::sar:
      BULKGNN_EXPECTS(replication == 1,
                      "--replication {} with --grid {}: only 1.5d and 3d replicate (1.5d: copies "
                      "of each block row, 3d: layers)",
                      replication, name);
      break;
    case grid_kind::one_and_half_d:
      BULKGNN_EXPECTS(ranks % replication == 0,
                      "--grid 1.5d --replication {}: c must divide the {} ranks", replication,
                      ranks);
      break;
    case grid_kind::two_d:
      BULKGNN_EXPECTS(replication == 1,
                      "--replication {} with --grid 2d: a 2D grid has no layers (use --grid 3d)",
                      replication);
      side_ = exact_square_root(ranks);
      BULKGNN_EXPECTS(side_ > 0,
                      "--grid 2d needs a square number of ranks (1, 4, 9, 16, ...), not {}", ranks);
      break;
    case grid_kind::three_d:
      BULKGNN_EXPECTS(ranks % replication == 0 && exact_square_root(ranks / replication) > 0,
                      "--grid 3d --replication {}: the {} ranks must be c·q² with c = {} layers "
                      "(e.g. 8 ranks with c = 2)",
                      replication, ranks, replication);
      side_ = exact_square_root(ranks / replication);
      break;
  }
}

int grid_layout::parts() const {
  return kind_ == grid_kind::one_and_half_d ? ranks_ / replication_ : ranks_;
}

// 3d: rank (ℓ, a, b) = ℓq² + aq + b holds part (aq + b)·c + ℓ, so that the c
// parts of a fiber are contiguous, and so are the parts of a grid row.
int grid_layout::part_of_rank(int r) const {
  switch (kind_) {
    case grid_kind::one_and_half_d:
      return r / replication_;
    case grid_kind::three_d: {
      const int layer_size = side_ * side_;
      return (r % layer_size) * replication_ + r / layer_size;
    }
    default:
      return r;
  }
}

int grid_layout::rank_of_part(int p) const {
  switch (kind_) {
    case grid_kind::one_and_half_d:
      return p * replication_;
    case grid_kind::three_d:
      return (p % replication_) * side_ * side_ + p / replication_;
    default:
      return p;
  }
}

}  // namespace bulkgnn::fullbatch
