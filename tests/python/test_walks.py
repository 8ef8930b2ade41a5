"""bulkgnn.node2vec_walks: walks along the graph's edges, node2vec's second-order
step weights, the same walks for the same seed, argument errors."""

import unittest

import numpy as np

import bulkgnn
from support import CORA

DS = bulkgnn.Dataset(CORA)


class Walks(unittest.TestCase):
    def test_each_step_is_an_edge_and_the_first_column_is_the_start(self):
        start = np.arange(0, DS.num_nodes, 7)
        walks = bulkgnn.node2vec_walks(DS, start, 10, p=0.5, q=2.0, seed=1)
        self.assertEqual(walks.shape, (len(start), 11))
        self.assertEqual(walks.dtype, np.int64)
        self.assertTrue(np.array_equal(walks[:, 0], start))
        indptr, indices = np.asarray(DS.indptr), np.asarray(DS.indices)
        edges = set(zip(np.repeat(np.arange(DS.num_nodes), np.diff(indptr)).tolist(),
                        indices.tolist()))
        for walk in walks:
            for a, b in zip(walk[:-1], walk[1:]):
                if b < 0:
                    break
                self.assertIn((int(a), int(b)), edges)

    def test_the_same_seed_and_epoch_give_the_same_walks(self):
        start = np.arange(100)
        one = bulkgnn.node2vec_walks(DS, start, 8, p=2.0, q=0.5, seed=3, epoch=1)
        again = bulkgnn.node2vec_walks(DS, start, 8, p=2.0, q=0.5, seed=3, epoch=1)
        other = bulkgnn.node2vec_walks(DS, start, 8, p=2.0, q=0.5, seed=3, epoch=2)
        self.assertTrue(np.array_equal(one, again))
        self.assertFalse(np.array_equal(one, other))

    def test_second_steps_follow_the_return_and_in_out_weights(self):
        # 0 - 1, 0 - 2, 1 - 2, 1 - 3: from 0 through 1, back to 0 weighs 1/p, to 2
        # (0's neighbour) 1, to 3 (not) 1/q.
        graph = bulkgnn.Dataset.from_arrays(
            edge_index=np.array([[0, 0, 1, 1], [1, 2, 2, 3]]), num_nodes=4, add_inverse_edges=True)
        walks = bulkgnn.node2vec_walks(graph, np.zeros(40000, dtype=np.int64), 2, p=0.5, q=4.0)
        second = walks[walks[:, 1] == 1, 2]
        weights = np.array([2.0, 0.0, 1.0, 0.25])
        expected = weights / weights.sum()
        for vertex in (0, 2, 3):
            share = np.mean(second == vertex)
            sd = np.sqrt(expected[vertex] * (1 - expected[vertex]) / len(second))
            self.assertLess(abs(share - expected[vertex]), 5 * sd, vertex)

    def test_bad_arguments_name_themselves(self):
        with self.assertRaisesRegex(ValueError, "^p must be finite and positive"):
            bulkgnn.node2vec_walks(DS, np.arange(3), 5, p=0.0)
        with self.assertRaisesRegex(ValueError, "start\\[1\\]"):
            bulkgnn.node2vec_walks(DS, np.array([0, DS.num_nodes]), 5)
        with self.assertRaisesRegex(ValueError, "^walk_length must be in"):
            bulkgnn.node2vec_walks(DS, np.arange(3), 0)
        for not_ids in (np.array([1.7]), np.ones(DS.num_nodes, dtype=bool)):
            with self.assertRaisesRegex(ValueError, "start must hold integer vertex ids"):
                bulkgnn.node2vec_walks(DS, not_ids, 3)

    def test_a_walk_stays_at_a_vertex_without_neighbours(self):
        graph = bulkgnn.Dataset.from_arrays(edge_index=np.array([[0], [1]]), num_nodes=3)
        walks = bulkgnn.node2vec_walks(graph, np.array([0, 2]), 4)
        self.assertTrue(np.array_equal(walks, [[0, 0, 0, 0, 0], [2, 2, 2, 2, 2]]))


if __name__ == "__main__":
    unittest.main()
