#include "bulkgnn/core/grid.hpp"

#include "bulkgnn/core/error.hpp"

#include <algorithm>
#include <cmath>

namespace bulkgnn {

namespace {

// q with q·q == n, or 0.
int exact_square_root(int n) {
  if (n < 1) return 0;
  const auto q = static_cast<int>(std::lround(std::sqrt(static_cast<double>(n))));
  return q * q == n ? q : 0;
}

}  // namespace

std::string grid_kind_name(grid_kind kind) {
  switch (kind) {
    case grid_kind::replicated:
      return "replicated";
    case grid_kind::one_d:
      return "1d";
    case grid_kind::one_and_half_d:
      return "1.5d";
    case grid_kind::two_d:
      return "2d";
    case grid_kind::two_d_summa:
      return "2d-summa";
    case grid_kind::three_d:
      return "3d";
    case grid_kind::sar:
      return "sar";
  }
  return "unknown";
}

std::string grid_kind_names(std::span<const grid_kind> kinds) {
  std::string text;
  for (std::size_t i = 0; i < kinds.size(); ++i) {
    if (i > 0) text += i + 1 == kinds.size() ? " or " : ", ";
    text += grid_kind_name(kinds[i]);
  }
  return text;
}

namespace {

[[noreturn]] void refuse_grid(std::string_view name, std::span<const grid_kind> accepted,
                              std::string_view mode) {
  throw option_error(
      fmt::format("layout_options.grid {}: {} runs on {}", name, mode, grid_kind_names(accepted)));
}

}  // namespace

void require_grid_kind_in(grid_kind kind, std::span<const grid_kind> accepted,
                          std::string_view mode) {
  if (std::ranges::find(accepted, kind) == accepted.end())
    refuse_grid(grid_kind_name(kind), accepted, mode);
}

grid_kind parse_grid_kind(std::string_view name, std::span<const grid_kind> accepted,
                          std::string_view mode) {
  for (const auto kind : accepted)
    if (grid_kind_name(kind) == name) return kind;
  refuse_grid(name, accepted, mode);
}

rank_grid::rank_grid(grid_kind kind, int ranks, int replication)
    : kind_(kind), ranks_(ranks), replication_(replication), rows_(ranks) {
  const auto name = grid_kind_name(kind);
  BULKGNN_EXPECTS(ranks >= 1, "layout_options.grid {}: {} ranks", name, ranks);
  BULKGNN_EXPECTS(replication >= 1, "layout_options.replication {}: must be at least 1",
                  replication);
  switch (kind) {
    case grid_kind::replicated:
    case grid_kind::one_d:
    case grid_kind::sar:
      BULKGNN_EXPECTS(replication == 1,
                      "layout_options.replication {} with layout_options.grid {}: only 1.5d and "
                      "3d replicate (1.5d: copies of each block row, 3d: layers)",
                      replication, name);
      if (kind == grid_kind::replicated) rows_ = 1;
      return;
    case grid_kind::one_and_half_d:
      BULKGNN_EXPECTS(ranks % replication == 0,
                      "layout_options.grid 1.5d with layout_options.replication {}: c must divide "
                      "the {} ranks",
                      replication, ranks);
      rows_ = ranks / replication;
      return;
    case grid_kind::two_d:
    case grid_kind::two_d_summa:
      BULKGNN_EXPECTS(replication == 1,
                      "layout_options.replication {} with layout_options.grid {}: a 2D grid has "
                      "no layers (use 3d)",
                      replication, name);
      columns_ = exact_square_root(ranks);
      BULKGNN_EXPECTS(columns_ > 0,
                      "layout_options.grid {} needs a square number of ranks (1, 4, 9, 16, ...), "
                      "not {}",
                      name, ranks);
      rows_ = columns_;
      return;
    case grid_kind::three_d:
      columns_ = ranks % replication == 0 ? exact_square_root(ranks / replication) : 0;
      BULKGNN_EXPECTS(columns_ > 0,
                      "layout_options.grid 3d with layout_options.replication {}: the {} ranks "
                      "must be c·q² with c = {} layers (e.g. 8 ranks with c = 2)",
                      replication, ranks, replication);
      rows_ = columns_;
      return;
  }
}

grid_position rank_grid::position_of(int rank) const {
  BULKGNN_ASSERT(rank >= 0 && rank < ranks_);
  const int layer_size = rows_ * columns_;
  return {
      .layer = rank / layer_size, .row = rank % layer_size / columns_, .column = rank % columns_};
}

int rank_grid::rank_at(grid_position position) const {
  BULKGNN_ASSERT(position.layer >= 0 && position.layer < layers() && position.row >= 0 &&
                 position.row < rows_ && position.column >= 0 && position.column < columns_);
  return (position.layer * rows_ + position.row) * columns_ + position.column;
}

}  // namespace bulkgnn
