#include "bulkgnn/session/session.hpp"

#include "bulkgnn/core/error.hpp"
#include "small_csbm.hpp"

#include <gtest/gtest.h>

#include <string>

// The session as a front end other than the CLI sees it, in a process that
// runs alone: errors name layout_options fields, never command-line flags.
namespace bulkgnn::session {
namespace {

using bulkgnn::testing::scratch_dir;
using bulkgnn::testing::small_csbm;

std::string refusal(const data::dataset& ds, const layout_options& layout) {
  try {
    const run_session run(ds, layout, true, {});
    return {};
  } catch (const option_error& e) {
    return e.what();
  }
}

TEST(Session, AloneWithTheDefaultLayoutIsOneRankOverTheWholeGraph) {
  const scratch_dir dir;
  const auto ds = small_csbm(dir, 300);
  run_session run(ds, {}, true, {{"anything", "1"}});
  EXPECT_FALSE(run.distributed());
  EXPECT_EQ(run.rank(), 0);
  EXPECT_EQ(run.ranks(), 1);
  EXPECT_EQ(run.rows(), nullptr);
  EXPECT_EQ(run.data_parallel(), nullptr);
  EXPECT_TRUE(run.report().is_null());
  EXPECT_EQ(run.sum_over_ranks(7), 7);
  const std::vector<std::pair<std::int64_t, std::uint64_t>> digests{{0, 5}, {1, 6}};
  EXPECT_EQ(run.gather_digests(digests), digests);
}

TEST(Session, RefusalsNameTheLayoutFieldNotAFlag) {
  const scratch_dir dir;
  const auto ds = small_csbm(dir, 300);
  for (const auto& [layout, field] :
       {std::pair{layout_options{.grid = "2d"}, "layout_options.grid"},
        std::pair{layout_options{.feature_replication = 2}, "layout_options.feature_replication"},
        std::pair{layout_options{.partition = "spectral"}, "layout_options.partition"},
        std::pair{layout_options{.draw_at = "nowhere"}, "options.draw_at"}}) {
    const auto message = refusal(ds, layout);
    EXPECT_NE(message.find(field), std::string::npos) << message;
    EXPECT_EQ(message.find("--"), std::string::npos) << message;
  }
}

TEST(Session, LayoutSettingsAreNamedByField) {
  const auto settings = layout_settings({.grid = "1.5d", .replication = 2});
  ASSERT_EQ(settings.size(), 7u);
  EXPECT_EQ(settings[0].name, "layout_options.grid");
  EXPECT_EQ(settings[0].value, "1.5d");
  EXPECT_EQ(settings[1].value, "2");
  EXPECT_EQ(settings[4].name, "layout_options.draw_at");
  EXPECT_EQ(settings[4].value, "owner");
}

}  // namespace
}  // namespace bulkgnn::session
