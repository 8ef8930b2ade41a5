"""mb.to_pyg() / pyg_fields against the definition of PyG's NeighborLoader
output, and the adapters' lazy imports."""

import importlib
import importlib.util
import tempfile
import unittest
from unittest import mock

import numpy as np

import bulkgnn
from bulkgnn._adapters import pyg_fields
from support import CORA, requires_torch, torch, write_native_dataset

# Row v lists the in-neighbours of v (messages flow u -> v).
TINY_GRAPH = [[1, 2], [3], [3, 4], [5], [], [0]]


def mean_aggregation(x, edge_index, num_nodes):
    """One SAGE-style mean over in-neighbours: out[v] = mean of x[u], u -> v."""
    out = torch.zeros(num_nodes, x.shape[1], dtype=x.dtype)
    out.index_add_(0, edge_index[1], x[edge_index[0]])
    degree = torch.bincount(edge_index[1], minlength=num_nodes).clamp(min=1)
    return out / degree[:, None].to(x.dtype)


def full_graph_edge_index(ds):
    indptr, indices = ds.indptr, ds.indices
    targets = np.repeat(np.arange(ds.num_nodes), np.diff(indptr))
    return torch.stack([torch.from_numpy(indices.astype(np.int64)), torch.from_numpy(targets)])


@requires_torch
class PygLayout(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory()
        features = np.arange(12, dtype=np.float32).reshape(6, 2)
        path = write_native_dataset(f"{cls.tmp.name}/tiny", TINY_GRAPH, features,
                                    [0, 1, 0, 1, 0, 1], train=[0, 1])
        cls.ds = bulkgnn.Dataset(path)

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def test_tiny_graph_matches_the_hand_built_batch(self):
        loader = bulkgnn.NeighborLoader(self.ds, [0, 1], fanouts=[-1, -1], batch_size=2,
                                        shuffle=False)
        (mb,) = list(loader)
        batch = pyg_fields(mb)
        n_id = batch["n_id"].tolist()
        # Seeds first, then what hop 0 added ({2, 3}), then hop 1 ({4, 5}).
        self.assertEqual(n_id[:2], [0, 1])
        self.assertEqual(sorted(n_id[2:4]), [2, 3])
        self.assertEqual(sorted(n_id[4:]), [4, 5])
        self.assertEqual(batch["batch_size"], 2)
        self.assertEqual(batch["num_sampled_nodes"], [2, 2, 2])
        self.assertEqual(batch["num_sampled_edges"], [3, 3])
        # edge_index[0] is the source, edge_index[1] the target; hop 0's edges
        # (into the seeds) come first, then those into the nodes hop 0 added.
        source, target = batch["edge_index"].tolist()
        edges = [(n_id[s], n_id[t]) for s, t in zip(source, target)]
        self.assertEqual(sorted(edges[:3]), [(1, 0), (2, 0), (3, 1)])
        self.assertEqual(sorted(edges[3:]), [(3, 2), (4, 2), (5, 3)])
        self.assertEqual(batch["edge_index"].dtype, torch.int64)
        np.testing.assert_array_equal(batch["x"].numpy(), self.ds.features[n_id])
        np.testing.assert_array_equal(batch["y"].numpy(), self.ds.labels[n_id])
        self.assertEqual(batch["x"].data_ptr(), mb.features.data_ptr)  # no copy

    def test_two_mean_layers_give_the_seeds_their_full_graph_values(self):
        # With every neighbour taken, the batch must compute for its seeds
        # exactly what the whole graph computes: the PyG contract.
        ds = bulkgnn.Dataset(CORA)
        x_full = torch.from_numpy(np.asarray(ds.features, dtype=np.float64))
        full = full_graph_edge_index(ds)
        expected = mean_aggregation(mean_aggregation(x_full, full, ds.num_nodes), full,
                                    ds.num_nodes)
        for mb in bulkgnn.NeighborLoader(ds, fanouts=[-1, -1], batch_size=32):
            batch = pyg_fields(mb)
            x, n = batch["x"].double(), len(batch["n_id"])
            out = mean_aggregation(mean_aggregation(x, batch["edge_index"], n),
                                   batch["edge_index"], n)[:batch["batch_size"]]
            seeds = batch["n_id"][:batch["batch_size"]]
            self.assertTrue(torch.allclose(out, expected[seeds], rtol=1e-12, atol=1e-12))

    def test_trim_to_layer_counts_cover_each_hops_edges(self):
        ds = bulkgnn.Dataset(CORA)
        for mb in bulkgnn.NeighborLoader(ds, fanouts=[5, 5, 5], batch_size=64):
            batch = pyg_fields(mb)
            nodes = np.cumsum(batch["num_sampled_nodes"])
            edges = np.cumsum([0] + batch["num_sampled_edges"])
            source, target = batch["edge_index"]
            for hop in range(3):
                hop_source = source[edges[hop]:edges[hop + 1]]
                hop_target = target[edges[hop]:edges[hop + 1]]
                self.assertTrue(bool((hop_source < nodes[hop + 1]).all()))
                self.assertTrue(bool((hop_target < nodes[hop]).all()))
                if hop > 0:
                    self.assertTrue(bool((hop_target >= nodes[hop - 1]).all()))
            self.assertEqual(edges[-1], source.numel())

    def test_layer_wise_weights_come_as_edge_weight(self):
        ds = bulkgnn.Dataset(CORA)
        mb = next(iter(bulkgnn.NeighborLoader(ds, fanouts=[64, 64], batch_size=32,
                                              sampler="ladies")))
        batch = pyg_fields(mb)
        edge_index, weight = batch["edge_index"], batch["edge_weight"]
        self.assertEqual(weight.shape, (edge_index.shape[1],))
        # Each (source, target) of edge_index carries its block entry's
        # value: hop h is block L-1-h, whose rows past the previous hop's
        # are its new targets (a target has its edges in one hop only).
        expected, first_row = {}, 0
        for block in reversed(mb.blocks):
            indptr, indices, values = (np.from_dlpack(a) for a in
                                       (block.indptr, block.indices, block.values))
            for row in range(first_row, block.num_dst):
                for e in range(indptr[row], indptr[row + 1]):
                    expected[(int(indices[e]), row)] = float(values[e])
            first_row = block.num_dst
        self.assertEqual(len(expected), edge_index.shape[1])
        for i, (source, target) in enumerate(edge_index.t().tolist()):
            self.assertEqual(float(weight[i]), expected[(source, target)], (i, source, target))
        # LADIES' blocks are row-normalised: every target's weights sum to 1.
        sums = torch.zeros(int(edge_index[1].max()) + 1).index_add_(0, edge_index[1],
                                                                    weight)
        targets = torch.unique(edge_index[1])
        self.assertTrue(torch.allclose(sums[targets], torch.ones(len(targets)), atol=1e-5))


@requires_torch
class LazyImports(unittest.TestCase):
    def setUp(self):
        ds = bulkgnn.Dataset(CORA)
        self.mb = next(iter(bulkgnn.NeighborLoader(ds, fanouts=[5, 5], batch_size=32)))

    def test_to_pyg(self):
        if importlib.util.find_spec("torch_geometric") is None:
            with self.assertRaisesRegex(ImportError, "to_pyg.*torch_geometric"):
                self.mb.to_pyg()
            return
        batch = self.mb.to_pyg()
        self.assertEqual(batch.batch_size, self.mb.batch_size)
        self.assertTrue(torch.equal(batch.edge_index, pyg_fields(self.mb)["edge_index"]))

    def test_a_broken_peer_install_is_one_clear_import_error(self):
        real = importlib.import_module

        def broken(name, *args, **kwargs):
            if name == "dgl":
                raise FileNotFoundError("libgraphbolt_pytorch_2.15.so not found")
            return real(name, *args, **kwargs)

        with mock.patch("importlib.import_module", side_effect=broken):
            with self.assertRaisesRegex(ImportError, "to_dgl.*does not load with torch.*"
                                                     "FileNotFoundError.*libgraphbolt"):
                self.mb.to_dgl()

    def test_to_dgl(self):
        if importlib.util.find_spec("dgl") is None:
            with self.assertRaisesRegex(ImportError, "to_dgl.*dgl"):
                self.mb.to_dgl()
            return
        input_nodes, output_nodes, blocks = self.mb.to_dgl()
        self.assertEqual([b.num_dst_nodes() for b in blocks],
                         [b.num_dst for b in self.mb.blocks])
        self.assertEqual(blocks[0].srcdata["feat"].data_ptr(), self.mb.features.data_ptr)


def sampled_edges(batch):
    """The global (source, target) of every edge of a PyG-layout batch."""
    n_id = batch["n_id"]
    return n_id[batch["edge_index"][0]], n_id[batch["edge_index"][1]]


@requires_torch
class EdgeIds(unittest.TestCase):
    """e_id (asked for) numbers each sampled edge as the dataset's edge list did."""

    def test_e_id_indexes_the_edge_index_a_dataset_was_built_from_shuffled_or_sorted(self):
        # Sorted by destination, the edge list is in CSR order and keeps no numbers of its
        # own: an entry's position is its number.
        ds = bulkgnn.Dataset(CORA)
        rng = np.random.default_rng(4)
        targets = np.repeat(np.arange(ds.num_nodes), np.diff(ds.indptr))
        sorted_edges = np.stack([ds.indices.astype(np.int64), targets])
        for shuffled in (True, False):
            with self.subTest(shuffled=shuffled):
                edge_index = (sorted_edges[:, rng.permutation(sorted_edges.shape[1])]
                              if shuffled else sorted_edges)
                weight = rng.uniform(0.5, 2.0, edge_index.shape[1]).astype(np.float32)
                built = bulkgnn.Dataset.from_arrays(edge_index=edge_index, edge_weight=weight,
                                                    features=ds.features)
                mb = next(iter(bulkgnn.NeighborLoader(built, fanouts=[5, 5], batch_size=64,
                                                      seeds=None)))
                batch = pyg_fields(mb, e_id=True)
                e_id = batch["e_id"].numpy()
                self.assertEqual(len(e_id), batch["edge_index"].shape[1])
                source, target = (t.numpy() for t in sampled_edges(batch))
                np.testing.assert_array_equal(edge_index[0, e_id], source)
                np.testing.assert_array_equal(edge_index[1, e_id], target)
                # PyG slices its Data's edge_weight by e_id.
                np.testing.assert_array_equal(batch["edge_weight"].numpy(), weight[e_id])
                self.assertIsNone(pyg_fields(mb)["e_id"], "only when asked")

    def test_inverse_edges_take_their_edges_number(self):
        edge_index = np.array([[0, 1, 2, 3], [1, 2, 3, 0]])
        built = bulkgnn.Dataset.from_arrays(edge_index=edge_index, num_nodes=4,
                                            add_inverse_edges=True)
        mb = next(iter(bulkgnn.NeighborLoader(built, fanouts=[-1], batch_size=4, seeds=None,
                                              shuffle=False)))
        batch = pyg_fields(mb, e_id=True)
        source, target = (t.numpy() for t in sampled_edges(batch))
        e_id = batch["e_id"].numpy()
        self.assertEqual(len(e_id), 8)
        for s, t, e in zip(source, target, e_id):
            self.assertIn((int(s), int(t)), {tuple(edge_index[:, e]), tuple(edge_index[::-1, e])})

    def test_a_directory_datasets_e_id_is_the_csr_position(self):
        ds = bulkgnn.Dataset(CORA)
        for mb in bulkgnn.NeighborLoader(ds, fanouts=[4, 4], batch_size=256):
            batch = pyg_fields(mb, e_id=True)
            e_id = batch["e_id"].numpy()
            source, target = (t.numpy() for t in sampled_edges(batch))
            np.testing.assert_array_equal(ds.indices[e_id], source)
            self.assertTrue(np.all(ds.indptr[target] <= e_id))
            self.assertTrue(np.all(e_id < ds.indptr[target + 1]))
            self.assertNotIn("edge_weight", {k for k, v in batch.items() if v is not None})

    def test_block_e_id_and_ladies_self_loops(self):
        ds = bulkgnn.Dataset(CORA)
        mb = next(iter(bulkgnn.NeighborLoader(ds, fanouts=[64, 64], batch_size=32,
                                              sampler="ladies")))
        input_nodes = np.from_dlpack(mb.input_nodes)
        loops = 0
        for block in mb.blocks:
            indptr, indices = np.from_dlpack(block.indptr), np.from_dlpack(block.indices)
            e_id = np.from_dlpack(block.e_id)
            self.assertEqual(len(e_id), block.num_edges)
            rows = np.repeat(np.arange(block.num_dst), np.diff(indptr))
            is_loop = rows == indices
            # Â = D̃⁻¹(A + I): the self loops are no edges of cora.
            np.testing.assert_array_equal(e_id == -1, is_loop)
            loops += int(is_loop.sum())
            edges = ~is_loop
            np.testing.assert_array_equal(ds.indices[e_id[edges]], input_nodes[indices[edges]])
        self.assertGreater(loops, 0)
        batch = pyg_fields(mb, e_id=True)
        self.assertEqual(int((batch["e_id"] == -1).sum()), int(sum(
            (np.repeat(np.arange(b.num_dst), np.diff(np.from_dlpack(b.indptr)))
             == np.from_dlpack(b.indices))[np.from_dlpack(b.indptr)[first]:].sum()
            for b, first in zip(reversed(mb.blocks), [0] + [b.num_dst for b in
                                                            reversed(mb.blocks)][:-1]))))


if __name__ == "__main__":
    unittest.main()
