#include "bulkgnn/trainer/link_metrics.hpp"

#include "bulkgnn/core/error.hpp"

#include <gtest/gtest.h>

#include <vector>

namespace bulkgnn::trainer {
namespace {

// As ogb.linkproppred.Evaluator's _eval_hits: strictly above the K-th
// highest negative.
TEST(link_metrics, hits_at_k_counts_positives_strictly_above_the_kth_negative) {
  const std::vector<float> negative{0.1f, 0.9f, 0.5f, 0.7f, 0.3f};
  // K = 2: the 2nd highest negative is 0.7.
  EXPECT_DOUBLE_EQ(hits_at_k(std::vector<float>{0.8f, 0.7f, 0.95f, 0.2f}, negative, 2), 0.5);
  EXPECT_DOUBLE_EQ(hits_at_k(std::vector<float>{0.8f}, negative, 1), 0.0);
  EXPECT_DOUBLE_EQ(hits_at_k(std::vector<float>{0.8f}, negative, 5), 1.0);  // above 0.1
  // Fewer negatives than K: every positive is a hit, as OGB has it.
  EXPECT_DOUBLE_EQ(hits_at_k(std::vector<float>{-5.0f}, negative, 6), 1.0);
  EXPECT_THROW(std::ignore = hits_at_k(std::vector<float>{1.0f}, negative, 0), error);
}

// As _eval_mrr: rank = 1 + (#above + #at least as high) / 2.
TEST(link_metrics, mean_reciprocal_rank_splits_ties_as_ogb_does) {
  // Positive 0 beats both of its negatives: rank 1. Positive 1 ties one and
  // is below the other: rank 1 + (1 + 2)/2 = 2.5.
  const std::vector<float> positive{0.9f, 0.5f};
  const std::vector<float> negative{0.1f, 0.2f, 0.5f, 0.8f};
  EXPECT_DOUBLE_EQ(mean_reciprocal_rank(positive, negative), (1.0 + 1.0 / 2.5) / 2.0);
  EXPECT_DOUBLE_EQ(mean_reciprocal_rank({}, {}), 0.0);
  EXPECT_THROW(std::ignore = mean_reciprocal_rank(positive, std::vector<float>{0.1f, 0.2f, 0.3f}),
               error);
}

// As OGB's citation2 evaluator: hits@K = rank <= K, the rank as above.
TEST(link_metrics, hits_of_own_negatives_count_ranks_up_to_k) {
  const std::vector<float> positive{0.9f, 0.5f};
  const std::vector<float> negative{0.1f, 0.2f, 0.5f, 0.8f};  // ranks 1 and 2.5
  EXPECT_DOUBLE_EQ(hits_at_k_of_own_negatives(positive, negative, 1), 0.5);
  EXPECT_DOUBLE_EQ(hits_at_k_of_own_negatives(positive, negative, 2), 0.5);
  EXPECT_DOUBLE_EQ(hits_at_k_of_own_negatives(positive, negative, 3), 1.0);
  EXPECT_DOUBLE_EQ(hits_at_k_of_own_negatives({}, {}, 1), 0.0);
  EXPECT_THROW(
      std::ignore = hits_at_k_of_own_negatives(positive, std::vector<float>{0.1f, 0.2f, 0.3f}, 1),
      error);
}

}  // namespace
}  // namespace bulkgnn::trainer
