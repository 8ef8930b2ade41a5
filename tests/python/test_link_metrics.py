"""bulkgnn.hits_at_k and bulkgnn.mean_reciprocal_rank against OGB's link
Evaluator: ogb.linkproppred.Evaluator itself where the package is installed,
and always against its definitions transcribed from ogb 1.3.6 in numpy."""

import unittest

import numpy as np

import bulkgnn

try:
    import torch
    from ogb.linkproppred import Evaluator
except ImportError:  # ogb needs pandas and torch; CI installs no ogb
    Evaluator = None


def ogb_hits(y_pred_pos, y_pred_neg, k):
    """ogb.linkproppred.Evaluator._eval_hits, numpy branch."""
    if len(y_pred_neg) < k:
        return 1.0
    kth_score_in_negative_edges = np.sort(y_pred_neg)[-k]
    return float(np.sum(y_pred_pos > kth_score_in_negative_edges)) / len(y_pred_pos)


def ogb_mrr(y_pred_pos, y_pred_neg):
    """ogb.linkproppred.Evaluator._eval_mrr, numpy branch, averaged."""
    y_pred_pos = y_pred_pos.reshape(-1, 1)
    optimistic_rank = (y_pred_neg >= y_pred_pos).sum(axis=1)
    pessimistic_rank = (y_pred_neg > y_pred_pos).sum(axis=1)
    ranking_list = 0.5 * (optimistic_rank + pessimistic_rank) + 1
    return float((1.0 / ranking_list.astype(np.float32)).mean())


def scores(rng, shape):
    # Few distinct values, so that ties between positives and negatives occur.
    return (rng.integers(0, 40, size=shape) / 8.0 - 2.0).astype(np.float32)


class AgainstOgb(unittest.TestCase):
    def test_hits_at_k_is_ogbs_for_random_scores_with_ties(self):
        rng = np.random.default_rng(5)
        for positives, negatives, k in [(100, 500, 50), (37, 20, 20), (10, 5, 10), (1, 1, 1)]:
            pos = scores(rng, positives)
            neg = scores(rng, negatives)
            self.assertEqual(bulkgnn.hits_at_k(pos, neg, k), ogb_hits(pos, neg, k))
            if Evaluator is not None:
                evaluator = Evaluator(name="ogbl-collab")
                evaluator.K = k
                got = evaluator.eval({"y_pred_pos": torch.from_numpy(pos),
                                      "y_pred_neg": torch.from_numpy(neg)})[f"hits@{k}"]
                self.assertEqual(bulkgnn.hits_at_k(pos, neg, k), got)

    def test_mean_reciprocal_rank_is_ogbs_for_random_scores_with_ties(self):
        rng = np.random.default_rng(6)
        for positives, per in [(200, 100), (13, 7), (1, 1)]:
            pos = scores(rng, positives)
            neg = scores(rng, (positives, per))
            self.assertAlmostEqual(bulkgnn.mean_reciprocal_rank(pos, neg), ogb_mrr(pos, neg),
                                   places=6)
            if Evaluator is not None:  # its numpy branch fails (sum(dim=1)): torch's
                got = Evaluator(name="ogbl-citation2").eval(
                    {"y_pred_pos": torch.from_numpy(pos),
                     "y_pred_neg": torch.from_numpy(neg)})["mrr_list"].mean()
                self.assertAlmostEqual(bulkgnn.mean_reciprocal_rank(pos, neg), float(got),
                                       places=6)

    def test_shapes_that_do_not_match_are_refused(self):
        with self.assertRaisesRegex(ValueError, "y_pred_neg"):
            bulkgnn.mean_reciprocal_rank(np.zeros(3, np.float32), np.zeros((2, 4), np.float32))
        with self.assertRaisesRegex(ValueError, "K = 0"):
            bulkgnn.hits_at_k(np.zeros(3, np.float32), np.zeros(4, np.float32), 0)


if __name__ == "__main__":
    print("ogb's Evaluator:", "installed, compared" if Evaluator else "not installed; "
          "compared with its definitions transcribed")
    unittest.main()
