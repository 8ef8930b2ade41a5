"""bulkgnn.LinkNeighborLoader: PyG's link batch layout, negatives, a minibatch's
own edges left out of its blocks, the same minibatches for any bulk or threads,
labels, and argument errors."""

import types
import unittest
from unittest import mock

import numpy as np

import bulkgnn
from support import CORA, positives_of, requires_torch, sampled_pairs, torch

DS = bulkgnn.Dataset(CORA)
INDPTR = np.asarray(DS.indptr)
SOURCE = np.asarray(DS.indices).astype(np.int64)
TARGET = np.repeat(np.arange(DS.num_nodes), np.diff(INDPTR))
# One direction of each undirected edge (cora stores both).
ONE_WAY = np.stack([SOURCE, TARGET])[:, SOURCE < TARGET]


class Layout(unittest.TestCase):
    def test_a_batch_holds_its_positives_then_its_negatives_in_local_ids(self):
        loader = bulkgnn.LinkNeighborLoader(DS, num_neighbors=[5, 5], edge_label_index=ONE_WAY,
                                            neg_sampling_ratio=1.5, batch_size=128, shuffle=True)
        seen = []
        for mb in loader:
            self.assertTrue(mb.is_link)
            input_id = mb.input_id.numpy()
            index = mb.edge_label_index.numpy()
            label = mb.edge_label.numpy()
            p = len(input_id)
            self.assertEqual(index.shape, (2, p + int(np.ceil(p * 1.5))))
            # Local ids are positions among the seeds, the first input nodes.
            self.assertLess(index.max(), mb.batch_size)
            np.testing.assert_array_equal(label, [1.0] * p + [0.0] * (index.shape[1] - p))
            source, target = positives_of(mb)
            np.testing.assert_array_equal(source, ONE_WAY[0, input_id])
            np.testing.assert_array_equal(target, ONE_WAY[1, input_id])
            seen.extend(input_id.tolist())
        self.assertEqual(sorted(seen), list(range(ONE_WAY.shape[1])))
        self.assertEqual(len(loader), -(-ONE_WAY.shape[1] // 128))

    def test_without_shuffle_the_positives_come_in_order(self):
        loader = bulkgnn.LinkNeighborLoader(DS, num_neighbors=[3], edge_label_index=ONE_WAY,
                                            batch_size=100)
        ids = np.concatenate([mb.input_id.numpy() for mb in loader])
        np.testing.assert_array_equal(ids, np.arange(ONE_WAY.shape[1]))

    def test_the_default_edges_are_every_stored_edge(self):
        loader = bulkgnn.LinkNeighborLoader(DS, num_neighbors=[2], batch_size=4096, exclude="none")
        self.assertEqual(sum(len(mb.input_id.numpy()) for mb in loader), DS.num_edges)

    def test_triplet_negatives_corrupt_each_positives_target(self):
        loader = bulkgnn.LinkNeighborLoader(
            DS, num_neighbors=[3], edge_label_index=ONE_WAY, batch_size=64,
            neg_sampling={"mode": "triplet", "amount": 2}, strict=True)
        mb = next(iter(loader))
        self.assertIsNone(mb.edge_label)
        negatives = mb.dst_neg_index.numpy()
        self.assertEqual(negatives.shape, (64, 2))
        one = bulkgnn.LinkNeighborLoader(DS, num_neighbors=[3], edge_label_index=ONE_WAY,
                                         batch_size=64, neg_sampling="triplet")
        self.assertEqual(next(iter(one)).dst_neg_index.numpy().shape, (64,))  # as PyG squeezes
        nodes = mb.input_nodes.numpy()
        source, _ = positives_of(mb)
        edges = set(zip(SOURCE.tolist(), TARGET.tolist()))
        for i in range(64):
            for t in nodes[negatives[i]]:
                self.assertNotEqual(source[i], t)
                self.assertNotIn((source[i], int(t)), edges)


class Exclusion(unittest.TestCase):
    def seed_edges_sampled(self, exclude):
        loader = bulkgnn.LinkNeighborLoader(DS, num_neighbors=[-1, 4], edge_label_index=ONE_WAY,
                                            batch_size=256, exclude=exclude, shuffle=True)
        found = 0
        for mb in loader:
            source, target = positives_of(mb)
            pairs = sampled_pairs(mb)
            for s, t in zip(source.tolist(), target.tolist()):
                found += ((s, t) in pairs) + ((t, s) in pairs)
        return found

    def test_a_minibatchs_own_edges_are_never_in_its_blocks(self):
        # Every neighbour at the first hop: the edges are there unless left out.
        self.assertGreater(self.seed_edges_sampled("none"), 1000)
        self.assertEqual(self.seed_edges_sampled("reverse"), 0)


class Determinism(unittest.TestCase):
    def digests(self, **kwargs):
        loader = bulkgnn.LinkNeighborLoader(DS, num_neighbors=[4, 3], edge_label_index=ONE_WAY,
                                            neg_sampling_ratio=1.0, batch_size=200, shuffle=True,
                                            seed=3, **kwargs)
        return [[mb.digest() for mb in loader] for _ in range(2)]

    def test_the_same_minibatches_for_any_bulk_and_threads(self):
        reference = self.digests(bulk=1, threads=1)
        self.assertNotEqual(reference[0], reference[1])  # epochs differ
        self.assertEqual(self.digests(bulk=7, threads=2), reference)
        self.assertEqual(self.digests(bulk=64), reference)


class Labels(unittest.TestCase):
    def first_labels(self, label=None, **kwargs):
        if label is None:
            label = np.arange(ONE_WAY.shape[1], dtype=np.float32) % 3
        loader = bulkgnn.LinkNeighborLoader(DS, num_neighbors=[2], edge_label_index=ONE_WAY,
                                            edge_label=label, batch_size=50, **kwargs)
        mb = next(iter(loader))
        return label[mb.input_id.numpy()], mb.edge_label.numpy()

    def test_binary_negatives_shift_the_given_labels_by_one_as_pyg(self):
        given, got = self.first_labels(neg_sampling="binary")
        np.testing.assert_array_equal(got, np.concatenate([given + 1, np.zeros(50)]))

    def test_labels_that_leave_zero_free_stay_as_pyg(self):
        # RandomLinkSplit's training labels are all ones: PyG shifts only from 0.
        given, got = self.first_labels(label=np.ones(ONE_WAY.shape[1], dtype=np.float32),
                                       neg_sampling="binary")
        np.testing.assert_array_equal(got, np.concatenate([given, np.zeros(50)]))

    def test_without_negatives_the_labels_pass_through(self):
        given, got = self.first_labels()
        np.testing.assert_array_equal(got, given)


class Errors(unittest.TestCase):
    def refused(self, message, **kwargs):
        arguments = {"num_neighbors": [2], "edge_label_index": ONE_WAY, **kwargs}
        with self.assertRaises(ValueError) as caught:
            bulkgnn.LinkNeighborLoader(DS, **arguments)
        self.assertIn(message, str(caught.exception))

    def test_bad_arguments_are_refused_by_name(self):
        self.refused("shape (2, E)", edge_label_index=np.zeros((3, 4), dtype=np.int64))
        bad = ONE_WAY.copy()
        bad[1, 5] = DS.num_nodes
        self.refused(f"edge 5 has vertex {DS.num_nodes}", edge_label_index=bad)
        self.refused("mode must be 'binary' or 'triplet'", neg_sampling="pairs")
        self.refused("whole number", neg_sampling={"mode": "triplet", "amount": 1.5})
        self.refused("not both", neg_sampling="binary", neg_sampling_ratio=1.0)
        self.refused("one label per edge", edge_label=np.ones(3))
        self.refused("exclude must be", exclude="reverse_id")

    def test_a_gpu_is_refused_naming_where_link_minibatches_are_sampled(self):
        self.refused("sampled on the host so far", device="cuda")

    def test_a_sampler_that_cannot_leave_edges_out_is_refused_up_front(self):
        for sampler in ("shadow",):
            self.refused(f"{sampler} sampler cannot leave", sampler=sampler,
                         num_neighbors=[2])

    def test_layer_wise_blocks_leave_the_minibatchs_edges_out(self):
        loader = bulkgnn.LinkNeighborLoader(DS, num_neighbors=[512, 512], sampler="ladies",
                                            edge_label_index=ONE_WAY, batch_size=64,
                                            exclude="reverse")
        for mb in loader:
            nodes = np.from_dlpack(mb.input_nodes)
            label = np.from_dlpack(mb.edge_label_index)[:, :mb.input_id.shape[0]]
            seeds = {(int(nodes[s]), int(nodes[t])) for s, t in label.T}
            seeds |= {(t, s) for s, t in seeds}
            for block in mb.blocks:
                indptr = np.from_dlpack(block.indptr)
                indices = np.from_dlpack(block.indices)
                rows = np.repeat(np.arange(block.num_dst), np.diff(indptr))
                entries = zip(nodes[indices].tolist(), nodes[rows].tolist())
                self.assertFalse(seeds & set(entries))


@requires_torch
class ToPyg(unittest.TestCase):
    def test_the_fields_of_pygs_link_batch(self):
        from bulkgnn._adapters import pyg_fields
        loader = bulkgnn.LinkNeighborLoader(DS, num_neighbors=[3, 2], edge_label_index=ONE_WAY,
                                            neg_sampling_ratio=1.0, batch_size=32)
        fields = pyg_fields(next(iter(loader)))
        self.assertIsNone(fields["batch_size"])
        self.assertEqual(tuple(fields["edge_label_index"].shape), (2, 64))
        self.assertEqual(fields["edge_label"].dtype, torch.float32)
        self.assertEqual(fields["input_id"].tolist(), list(range(32)))
        n_id = fields["n_id"]
        pairs = n_id[fields["edge_label_index"][:, :32]]
        self.assertTrue(torch.equal(pairs, torch.from_numpy(ONE_WAY[:, :32]).long()))


class FakeDglGraph:
    """What to_dgl() hands a graph: its edges, node count and edge data."""

    def __init__(self, edges, num_nodes):
        self.src, self.dst = (e.tolist() for e in edges)
        self.num_nodes = num_nodes
        self.edata = {}


def fake_dgl():
    """A stand-in for dgl (not installed in CI) recording what to_dgl() builds;
    the real one runs in benchmarks/peers/check_adapters.py."""
    block = types.SimpleNamespace(srcdata={}, dstdata={}, edata={})
    return types.SimpleNamespace(EID="_ID", graph=FakeDglGraph,
                                 create_block=lambda *args, **kwargs: block)


@requires_torch
class ToDgl(unittest.TestCase):
    def batch(self, **negatives):
        loader = bulkgnn.LinkNeighborLoader(DS, num_neighbors=[3, 2], edge_label_index=ONE_WAY,
                                            batch_size=16, **negatives)
        mb = next(iter(loader))
        with mock.patch.dict("sys.modules", {"dgl": fake_dgl()}):
            return mb, mb.to_dgl()

    def global_pairs(self, mb, graph):
        nodes = mb.input_nodes.numpy()
        return list(zip(nodes[graph.src].tolist(), nodes[graph.dst].tolist()))

    def test_binary_negatives_give_a_pair_graph_and_a_negative_pair_graph(self):
        mb, (input_nodes, pair, negative, blocks) = self.batch(neg_sampling_ratio=2.0)
        self.assertEqual(input_nodes.tolist(), mb.input_nodes.numpy().tolist())
        self.assertEqual(pair.num_nodes, len(mb.seeds))
        self.assertEqual(self.global_pairs(mb, pair), list(zip(*ONE_WAY[:, :16].tolist())))
        self.assertEqual(pair.edata["_ID"].tolist(), list(range(16)))
        self.assertEqual(pair.edata["label"].tolist(), [1.0] * 16)
        self.assertEqual(len(negative.src), 32)
        index = mb.edge_label_index.numpy()
        self.assertEqual((negative.src, negative.dst), (index[0, 16:].tolist(),
                                                        index[1, 16:].tolist()))
        self.assertEqual(len(blocks), 2)

    def test_triplet_negatives_keep_each_positives_source(self):
        mb, (_, pair, negative, _) = self.batch(neg_sampling={"mode": "triplet", "amount": 3})
        self.assertEqual(len(negative.src), 48)
        self.assertEqual(negative.src, [s for s in pair.src for _ in range(3)])
        self.assertEqual(negative.dst, mb.dst_neg_index.numpy().reshape(-1).tolist())

    def test_without_negatives_only_the_pair_graph(self):
        _, batch = self.batch(neg_sampling_ratio=0.0)
        self.assertEqual(len(batch), 3)  # input_nodes, pair_graph, blocks


if __name__ == "__main__":
    unittest.main()
