#include "bulkgnn/distributed/agreement.hpp"

#include "bulkgnn/comm/mpi_communicator.hpp"

#include "bulkgnn/distributed/mpi_session.hpp"

#include <gtest/gtest.h>
#include <mpi.h>
#include "mpi_world.hpp"

#include <string>
#include <vector>

namespace bulkgnn::distributed {
namespace {

using testing::world_rank;
using testing::world_size;

// The message every rank got from require_same_settings; empty if none.
std::string disagreement(const std::vector<shared_setting>& settings) {
  try {
    comm::traffic_log log;
    comm::mpi_communicator ranks(MPI_COMM_WORLD, "agreement", log);
    require_same_settings(ranks, settings);
  } catch (const collective_error& e) {
    return e.what();
  }
  return {};
}

TEST(RequireSameSettings, PassesWhenEveryRankHasTheSameSettings) {
  EXPECT_EQ(disagreement({{"DATA", "cora"}, {"--epochs", "3"}}), "");
}

TEST(RequireSameSettings, PassesForTheSameSettingsInAnotherOrder) {
  if (world_rank() % 2 == 0)
    EXPECT_EQ(disagreement({{"--hidden", "16"}, {"--epochs", "3"}}), "");
  else
    EXPECT_EQ(disagreement({{"--epochs", "3"}, {"--hidden", "16"}}), "");
}

TEST(RequireSameSettings, FailsOnEveryRankNamingTheSettingAndWhoHoldsWhat) {
  const int last = world_size() - 1;
  const auto message =
      disagreement({{"DATA", "cora"}, {"--epochs", world_rank() == last ? "5" : "3"}});
  if (last == 0) {
    EXPECT_EQ(message, "");
    return;
  }
  const std::string others = last == 1 ? "rank 0" : fmt::format("ranks 0-{}", last - 1);
  EXPECT_EQ(message, fmt::format("the ranks disagree on --epochs (3 on {}; 5 on rank {}), which "
                                 "must be the same on every rank",
                                 others, last));
}

TEST(RequireSameSettings, NamesSettingsThatOnlySomeRanksHave) {
  std::vector<shared_setting> settings{{"command", "sample"}};
  if (world_rank() == 0) settings = {{"command", "train"}, {"--hidden", "16"}};
  const auto message = disagreement(settings);
  if (world_size() == 1) {
    EXPECT_EQ(message, "");
    return;
  }
  EXPECT_NE(message.find("command (train on rank 0; sample on "), std::string::npos) << message;
  EXPECT_NE(message.find("--hidden (16 on rank 0; nothing on "), std::string::npos) << message;
}

TEST(RequireSameSettings, IsFollowedByOrdinaryCollectivesEvenAfterADisagreement) {
  std::ignore = disagreement({{"--seed", std::to_string(world_rank())}});
  int sum = 0;
  const int one = 1;
  MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  EXPECT_EQ(sum, world_size());
}

TEST(DescribeDisagreement, GroupsRanksByValueInRuns) {
  const std::vector<std::vector<shared_setting>> by_rank{{{"--bulk", "32"}},
                                                         {{"--bulk", "2"}},
                                                         {{"--bulk", "32"}},
                                                         {{"--bulk", "32"}},
                                                         {{"--bulk", "2"}}};
  EXPECT_EQ(describe_disagreement(by_rank),
            "the ranks disagree on --bulk (32 on ranks 0, 2-3; 2 on ranks 1, 4), which must be "
            "the same on every rank");
}

TEST(DescribeDisagreement, NamesEveryDifferingSettingInOrderAndShowsEmptyValues) {
  const std::vector<std::vector<shared_setting>> by_rank{
      {{"DATA", "a"}, {"--split", ""}, {"--seed", "0"}},
      {{"DATA", "b"}, {"--split", "public"}, {"--seed", "0"}}};
  EXPECT_EQ(describe_disagreement(by_rank),
            "the ranks disagree on DATA (a on rank 0; b on rank 1), --split ('' on rank 0; "
            "public on rank 1), which must be the same on every rank");
}

TEST(DescribeDisagreement, IsEmptyWhenEveryRankAgrees) {
  EXPECT_EQ(describe_disagreement({{{"--seed", "0"}}, {{"--seed", "0"}}}), "");
}

}  // namespace
}  // namespace bulkgnn::distributed
