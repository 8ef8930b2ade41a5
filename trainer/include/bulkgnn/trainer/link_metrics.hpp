#pragma once

#include <cstdint>
#include <span>

// OGB's link-prediction metrics (ogb.linkproppred.Evaluator), from scores.
namespace bulkgnn::trainer {

// Hits@K with one pool of negatives for every positive (ogbl-collab, -ddi,
// -ppa): the share of positives scored strictly above the K-th highest
// negative score; 1 when there are fewer than K negatives, as OGB has it.
[[nodiscard]] double hits_at_k(std::span<const float> positive, std::span<const float> negative,
                               std::int64_t k);

// Mean reciprocal rank with negatives of each positive's own (ogbl-citation2):
// positive i against negative[i·per, (i + 1)·per), per = negative.size() /
// positive.size(); its rank is 1 + (#negatives above + #negatives at least
// as high) / 2, ties splitting the difference as OGB's. 0 positives: 0.
[[nodiscard]] double mean_reciprocal_rank(std::span<const float> positive,
                                          std::span<const float> negative);

// Hits@K with negatives of each positive's own (ogbl-citation2's hits@K):
// the share of positives whose rank, as mean_reciprocal_rank ranks them, is
// at most K.
[[nodiscard]] double hits_at_k_of_own_negatives(std::span<const float> positive,
                                                std::span<const float> negative, std::int64_t k);

}  // namespace bulkgnn::trainer
