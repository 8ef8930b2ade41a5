#include "bulkgnn/trainer/epoch_loop.hpp"

#include "bulkgnn/comm/self_communicator.hpp"

#include <gtest/gtest.h>

#include <optional>
#include <vector>

namespace bulkgnn::trainer {
namespace {

TEST(BestValidation, KeepsTheFirstOfTiesAndIgnoresUnevaluatedEpochs) {
  best_validation best;
  best.offer(0, std::nullopt, std::nullopt);
  EXPECT_FALSE(best.best_epoch);
  best.offer(1, 0.5, 0.4);
  best.offer(2, 0.5, 0.9);  // a tie: the first stays
  best.offer(3, std::nullopt, 0.99);
  ASSERT_TRUE(best.best_epoch);
  EXPECT_EQ(*best.best_epoch, 1);
  EXPECT_EQ(best.test_acc_at_best, 0.4);
  best.offer(4, 0.6, std::nullopt);
  EXPECT_EQ(*best.best_epoch, 4);
  EXPECT_EQ(best.best_valid_acc, 0.6);
  EXPECT_EQ(best.test_acc_at_best, 0.0);
}

TEST(EpochLoop, EvaluatesEveryKEpochsAndAfterTheLast) {
  std::vector<std::int64_t> evaluated;
  for (std::int64_t e = 0; e < 7; ++e)
    if (evaluates_after(e, 7, 3)) evaluated.push_back(e);
  EXPECT_EQ(evaluated, (std::vector<std::int64_t>{2, 5, 6}));
  for (std::int64_t e = 0; e < 7; ++e) EXPECT_FALSE(evaluates_after(e, 7, 0));
}

struct toy_record {
  std::int64_t epoch = 0;
  std::optional<double> valid_acc;
  std::optional<double> test_acc;
};

TEST(EpochLoop, RunsFromTheFirstEpochAndOffersEachRecordBeforeKeepingIt) {
  best_validation best;
  std::vector<std::int64_t> kept;
  run_epochs(
      2, 6, 2, best,
      [](std::int64_t epoch) {
        return toy_record{.epoch = epoch, .valid_acc = {}, .test_acc = {}};
      },
      [](toy_record& r) {
        r.valid_acc = r.epoch == 3 ? 0.9 : 0.1;
        r.test_acc = 0.5;
      },
      [&](toy_record r) {
        EXPECT_EQ(r.valid_acc.has_value(), r.epoch == 3 || r.epoch == 5);
        if (r.epoch == 3) {
          EXPECT_EQ(best.best_epoch, 3);  // offered before kept
        }
        kept.push_back(r.epoch);
      });
  EXPECT_EQ(kept, (std::vector<std::int64_t>{2, 3, 4, 5}));
  EXPECT_EQ(best.best_epoch, 3);
}

struct link_like_record {
  std::int64_t epoch = 0;
  std::optional<double> valid_acc;
  std::optional<double> test_acc;
  std::optional<double> valid_mrr;
  std::optional<double> test_mrr;
  bool selects_by_mrr = false;
};

TEST(EpochLoop, ARecordThatSelectsByMrrIsOfferedItsMrrs) {
  for (const bool by_mrr : {false, true}) {
    best_validation best;
    // Hits are best at epoch 0, MRR at epoch 1.
    offer_record(best, link_like_record{0, 0.9, 0.8, 0.2, 0.3, by_mrr});
    offer_record(best, link_like_record{1, 0.5, 0.4, 0.6, 0.7, by_mrr});
    EXPECT_EQ(best.best_epoch, by_mrr ? 1 : 0);
    EXPECT_EQ(best.best_valid_acc, by_mrr ? 0.6 : 0.9);
    EXPECT_EQ(best.test_acc_at_best, by_mrr ? 0.7 : 0.8);
  }
}

TEST(EpochLoop, OneRankAlwaysAgreesWithItself) {
  comm::traffic_log log;
  comm::self_communicator alone("world", log);
  const std::vector<float> weights{1.0f, -2.0f};
  EXPECT_NO_THROW(require_same_weights(alone, weights, "test"));
}

}  // namespace
}  // namespace bulkgnn::trainer
