#include "bulkgnn/core/grid.hpp"

#include "bulkgnn/core/error.hpp"

#include <gtest/gtest.h>

#include <set>
#include <string>
#include <tuple>
#include <vector>

namespace bulkgnn {
namespace {

const std::vector<std::tuple<grid_kind, int, int>> grids_that_fit{{grid_kind::replicated, 4, 1},
                                                                  {grid_kind::one_d, 5, 1},
                                                                  {grid_kind::sar, 3, 1},
                                                                  {grid_kind::one_and_half_d, 6, 2},
                                                                  {grid_kind::one_and_half_d, 6, 6},
                                                                  {grid_kind::two_d, 9, 1},
                                                                  {grid_kind::two_d_summa, 4, 1},
                                                                  {grid_kind::three_d, 8, 2},
                                                                  {grid_kind::three_d, 18, 2}};

TEST(RankGrid, EveryRankHasOnePositionAndEveryPositionOneRank) {
  for (const auto& [kind, ranks, c] : grids_that_fit) {
    SCOPED_TRACE(grid_kind_name(kind) + " P=" + std::to_string(ranks));
    const rank_grid grid(kind, ranks, c);
    EXPECT_EQ(grid.layers() * grid.rows() * grid.columns(), ranks);
    std::set<std::tuple<int, int, int>> seen;
    for (int r = 0; r < ranks; ++r) {
      const auto at = grid.position_of(r);
      EXPECT_EQ(grid.rank_at(at), r);
      seen.insert({at.layer, at.row, at.column});
    }
    EXPECT_EQ(static_cast<int>(seen.size()), ranks);
  }
}

TEST(RankGrid, ShapesFollowTheKind) {
  const rank_grid replicated(grid_kind::replicated, 4, 1);
  EXPECT_EQ(replicated.layers(), 4);  // every rank a whole copy
  EXPECT_EQ(replicated.rows(), 1);
  const rank_grid one_and_half(grid_kind::one_and_half_d, 6, 2);
  EXPECT_EQ(one_and_half.layers(), 2);
  EXPECT_EQ(one_and_half.rows(), 3);
  // Replica k of block row i is rank k·(P/c) + i: a layer's ranks are contiguous.
  EXPECT_EQ(one_and_half.rank_at({.layer = 1, .row = 2, .column = 0}), 5);
  const rank_grid three_d(grid_kind::three_d, 18, 2);
  EXPECT_EQ(three_d.side(), 3);
  EXPECT_EQ(three_d.layers(), 2);
  const auto at = three_d.position_of(13);  // 13 = 1·9 + 1·3 + 1
  EXPECT_EQ(at.layer, 1);
  EXPECT_EQ(at.row, 1);
  EXPECT_EQ(at.column, 1);
}

TEST(RankGrid, RefusesWhatTheRanksCannotForm) {
  const auto message_of = [](grid_kind kind, int ranks, int c) {
    try {
      const rank_grid grid(kind, ranks, c);
    } catch (const option_error& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  EXPECT_NE(message_of(grid_kind::two_d, 8, 1).find("square"), std::string::npos);
  EXPECT_NE(message_of(grid_kind::two_d_summa, 2, 1).find("square"), std::string::npos);
  EXPECT_NE(message_of(grid_kind::one_and_half_d, 4, 3).find("c must divide"), std::string::npos);
  EXPECT_NE(message_of(grid_kind::three_d, 4, 2).find("c·q²"), std::string::npos);
  EXPECT_NE(message_of(grid_kind::replicated, 4, 2).find("layout_options.replication"),
            std::string::npos);
  EXPECT_NE(message_of(grid_kind::one_d, 0, 1).find("0 ranks"), std::string::npos);
  EXPECT_NE(message_of(grid_kind::one_d, 2, 0).find("at least 1"), std::string::npos);
}

TEST(GridKind, NamesParseBackWithinTheModesGrids) {
  for (const auto kind : minibatch_grids)
    EXPECT_EQ(parse_grid_kind(grid_kind_name(kind), minibatch_grids, "minibatch sampling"), kind);
  for (const auto kind : full_batch_grids)
    EXPECT_EQ(parse_grid_kind(grid_kind_name(kind), full_batch_grids, "full-batch training"), kind);
  try {
    (void)parse_grid_kind("sar", minibatch_grids, "minibatch sampling");
    FAIL() << "sar is no minibatch grid";
  } catch (const option_error& e) {
    EXPECT_EQ(std::string(e.what()),
              "layout_options.grid sar: minibatch sampling runs on replicated, 1.5d, 2d, "
              "2d-summa or 3d");
  }
  EXPECT_THROW((void)parse_grid_kind("4d", full_batch_grids, "full-batch training"), option_error);
}

}  // namespace
}  // namespace bulkgnn
