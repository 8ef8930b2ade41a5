"""bulkgnn.Dataset.from_arrays and from_pyg: datasets over arrays in memory,
viewed without a copy where their memory allows, checked as files are, and
sampled exactly as the same data read from a directory."""

import gc
import unittest

import numpy as np

import bulkgnn
from support import CORA, requires_torch, torch

# Five nodes; edge i goes from SOURCES[i] to TARGETS[i], so row v lists the
# sources of the edges into v.
SOURCES = [0, 1, 2, 3, 4, 0, 3]
TARGETS = [1, 2, 3, 4, 0, 2, 2]
WEIGHTS = [1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0]


def in_neighbour_csr(sources, targets, weights, n):
    """The CSR the definition gives: row v = sorted sources of edges into v,
    each weight with its source (stable among equal sources)."""
    rows = [sorted([(s, w) for s, t, w in zip(sources, targets, weights) if t == v],
                   key=lambda p: p[0]) for v in range(n)]
    indptr = np.cumsum([0] + [len(r) for r in rows])
    return indptr, [s for r in rows for s, _ in r], [w for r in rows for _, w in r]


def small(**overrides):
    arrays = dict(edge_index=np.array([SOURCES, TARGETS]),
                  features=np.arange(15, dtype=np.float32).reshape(5, 3),
                  labels=np.array([0, 1, 0, 1, 2]), train=[0, 1], valid=[2], test=[3, 4])
    arrays.update(overrides)
    return bulkgnn.Dataset.from_arrays(**arrays)


class FromArrays(unittest.TestCase):
    def test_edge_index_becomes_the_in_neighbour_csr(self):
        ds = small(edge_weight=np.array(WEIGHTS, dtype=np.float32))
        indptr, indices, weights = in_neighbour_csr(SOURCES, TARGETS, WEIGHTS, 5)
        np.testing.assert_array_equal(ds.indptr, indptr)
        np.testing.assert_array_equal(ds.indices, indices)
        np.testing.assert_array_equal(ds.edge_weight, weights)
        self.assertEqual((ds.num_nodes, ds.num_edges, ds.num_features, ds.num_classes),
                         (5, 7, 3, 3))
        train, valid, test = ds.split()
        np.testing.assert_array_equal(train, [0, 1])
        np.testing.assert_array_equal(test, [3, 4])

    def test_inverse_edges_add_every_reverse(self):
        ds = small(add_inverse_edges=True)
        indptr, indices, _ = in_neighbour_csr(SOURCES + TARGETS, TARGETS + SOURCES, [1] * 14, 5)
        np.testing.assert_array_equal(ds.indptr, indptr)
        np.testing.assert_array_equal(ds.indices, indices)

    def test_float32_features_are_viewed_not_copied(self):
        x = np.random.default_rng(0).random((5, 3), dtype=np.float32)
        labels = np.array([0, 1, 0, 1, 2], dtype=np.int32)
        ds = small(features=x, labels=labels)
        self.assertTrue(np.shares_memory(ds.features, x))
        self.assertTrue(np.shares_memory(ds.labels, labels))

    def test_other_dtypes_are_converted_to_equal_values(self):
        x = np.random.default_rng(1).random((5, 3))  # float64: a converted copy
        ds = small(features=x)
        self.assertFalse(np.shares_memory(ds.features, x))
        np.testing.assert_array_equal(ds.features, x.astype(np.float32))

    def test_masks_select_the_splits(self):
        mask = np.array([True, False, True, False, False])
        ds = small(train=mask, valid=None, test=None)
        np.testing.assert_array_equal(ds.split()[0], [0, 2])
        np.testing.assert_array_equal(ds.training_vertices(), [0, 2])

    def test_the_arrays_outlive_their_python_names(self):
        x = np.random.default_rng(2).random((5, 3), dtype=np.float32)
        expected = x.copy()
        ds = small(features=x)
        del x
        gc.collect()
        loader = bulkgnn.NeighborLoader(ds, fanouts=[2], batch_size=2, shuffle=False)
        for mb in loader:
            np.testing.assert_array_equal(np.from_dlpack(mb.features),
                                          expected[np.from_dlpack(mb.input_nodes)])
        np.testing.assert_array_equal(ds.features, expected)

    def test_csr_is_taken_as_it_is(self):
        indptr, indices, _ = in_neighbour_csr(SOURCES, TARGETS, WEIGHTS, 5)
        ds = bulkgnn.Dataset.from_arrays(indptr=indptr, indices=indices)
        self.assertEqual(ds.num_nodes, 5)
        np.testing.assert_array_equal(ds.indices, indices)


class FromArraysRefuses(unittest.TestCase):
    def assert_refused(self, naming, **overrides):
        with self.assertRaises((bulkgnn.Error, ValueError)) as caught:
            small(**overrides)
        self.assertIn(naming, str(caught.exception))

    def test_an_edge_outside_the_nodes(self):
        self.assert_refused("edge_index (in memory): edge 1 (1 -> 9)",
                            edge_index=[[0, 1], [1, 9]])

    def test_labels_of_another_length(self):
        self.assert_refused("labels (in memory): has 4 entries for 5 nodes", labels=[0, 1, 0, 1])

    def test_features_that_are_not_finite(self):
        x = np.zeros((5, 3), dtype=np.float32)
        x[2, 1] = np.nan
        self.assert_refused("features (in memory)", features=x)

    def test_a_node_in_two_parts_of_the_split(self):
        self.assert_refused("is also in train.npy", valid=[1])

    def test_a_mask_of_another_length(self):
        self.assert_refused("one entry per node (5)", train=np.array([True, False]))

    def test_an_unsigned_label_beyond_the_32_bit_range(self):
        self.assert_refused("labels holds 4294967295",
                            labels=np.array([0, 1, 0, 1, 2**32 - 1], dtype=np.uint32))

    def test_non_integer_edges(self):
        self.assert_refused("edge_index must hold integers", edge_index=[[0.5, 1], [1, 2]])

    def test_both_forms_of_the_graph(self):
        self.assert_refused("not both", indptr=[0, 0, 0, 0, 0, 0], indices=[])

    def test_an_unsorted_csr_row(self):
        with self.assertRaises(bulkgnn.Error) as caught:
            bulkgnn.Dataset.from_arrays(indptr=[0, 2, 2], indices=[1, 0])
        self.assertIn("indices (in memory): row 0 is not sorted", str(caught.exception))

    def test_a_row_pointer_that_does_not_span_the_indices(self):
        with self.assertRaises(bulkgnn.Error) as caught:
            bulkgnn.Dataset.from_arrays(indptr=[0, 1, 3], indices=[1, 0])
        self.assertIn("indptr (in memory)", str(caught.exception))


class SameAsTheDirectory(unittest.TestCase):
    def test_cora_from_arrays_samples_as_cora_from_its_files(self):
        files = bulkgnn.Dataset(CORA)
        train, valid, test = files.split()
        memory = bulkgnn.Dataset.from_arrays(
            indptr=np.array(files.indptr), indices=np.array(files.indices),
            features=np.array(files.features), labels=np.array(files.labels), train=train,
            valid=valid, test=test)

        def digests(ds):
            loader = bulkgnn.NeighborLoader(ds, fanouts=[5, 3], batch_size=256, seed=7)
            return [[mb.digest() for mb in loader] for _ in range(2)]

        self.assertEqual(digests(memory), digests(files))


class PygData:
    """The attributes a torch_geometric Data has (PyG itself is not needed)."""

    def __init__(self, **fields):
        self.__dict__.update(fields)


@requires_torch
class FromPyg(unittest.TestCase):
    def data(self, **extra):
        x = torch.rand(5, 3)
        mask = torch.tensor([True, True, False, False, False])
        return PygData(edge_index=torch.tensor([SOURCES, TARGETS]), x=x,
                       y=torch.tensor([[0], [1], [0], [1], [2]]), train_mask=mask,
                       val_mask=~mask, test_mask=torch.zeros(5, dtype=torch.bool), num_nodes=5,
                       **extra)

    def test_tensors_are_viewed_and_masks_become_the_split(self):
        data = self.data()
        ds = bulkgnn.Dataset.from_pyg(data)
        self.assertTrue(np.shares_memory(ds.features, data.x.numpy()))
        np.testing.assert_array_equal(ds.labels, [0, 1, 0, 1, 2])
        np.testing.assert_array_equal(ds.split()[0], [0, 1])
        np.testing.assert_array_equal(ds.split()[1], [2, 3, 4])

    def test_edge_weights_come_from_edge_weight_or_when_asked_edge_attr(self):
        expected = in_neighbour_csr(SOURCES, TARGETS, WEIGHTS, 5)[2]
        weighted = self.data(edge_weight=torch.tensor(WEIGHTS))
        np.testing.assert_array_equal(bulkgnn.Dataset.from_pyg(weighted).edge_weight, expected)
        self.assertIsNone(bulkgnn.Dataset.from_pyg(weighted, weighted=False).edge_weight)
        # An edge_attr often holds edge types: taken only when asked.
        typed = self.data(edge_attr=torch.tensor(WEIGHTS).view(-1, 1))
        self.assertIsNone(bulkgnn.Dataset.from_pyg(typed).edge_weight)
        np.testing.assert_array_equal(bulkgnn.Dataset.from_pyg(typed, weighted=True).edge_weight,
                                      expected)
        with self.assertRaises(ValueError):
            bulkgnn.Dataset.from_pyg(self.data(), weighted=True)

    def test_a_graph_without_edges(self):
        data = self.data()
        data.edge_index = torch.zeros((2, 0), dtype=torch.long)
        ds = bulkgnn.Dataset.from_pyg(data)
        self.assertEqual((ds.num_nodes, ds.num_edges), (5, 0))

    def test_the_loader_takes_the_data_itself(self):
        data = self.data()
        loader = bulkgnn.NeighborLoader(data, num_neighbors=[2, 2], batch_size=2,
                                        input_nodes=data.train_mask)
        batches = list(loader)
        self.assertEqual(len(batches), 1)
        torch.testing.assert_close(torch.from_dlpack(batches[0].features),
                                   data.x[torch.from_dlpack(batches[0].input_nodes).long()])


if __name__ == "__main__":
    unittest.main()
