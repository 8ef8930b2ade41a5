"""bulkgnn.Dataset: OGB raw and native directories, the embedded default, and
its arrays as read-only numpy views of the memory-mapped files."""

import gc
import gzip
import os
import subprocess
import tempfile
import unittest
import warnings

import numpy as np

import bulkgnn
from support import CLI, CORA, write_native_dataset


class OgbRawDirectory(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.ds = bulkgnn.Dataset(CORA)

    def test_sizes_are_those_of_the_files(self):
        self.assertEqual(self.ds.num_nodes, 2708)
        self.assertEqual(self.ds.num_edges, 10556)  # both directions of 5278 edges
        self.assertEqual(self.ds.num_features, 1433)
        self.assertEqual(self.ds.num_classes, 7)
        self.assertEqual(self.ds.features.shape, (2708, 1433))
        self.assertEqual(self.ds.features.dtype, np.float32)
        self.assertEqual(self.ds.indptr.shape, (2709,))
        self.assertIsNone(self.ds.edge_weight)

    def test_features_and_labels_are_the_files_values(self):
        with gzip.open(CORA / "raw" / "node-feat.csv.gz", "rt") as f:
            first_rows = [np.array(next(f).split(","), dtype=np.float32) for _ in range(3)]
        with gzip.open(CORA / "raw" / "node-label.csv.gz", "rt") as f:
            labels = np.array([int(line) for line in f], dtype=np.int32)
        np.testing.assert_array_equal(self.ds.features[:3], np.stack(first_rows))
        np.testing.assert_array_equal(self.ds.labels, labels)

    def test_arrays_are_read_only_views_not_copies(self):
        for name in ("indptr", "indices", "features", "labels"):
            a, b = getattr(self.ds, name), getattr(self.ds, name)
            self.assertFalse(a.flags.writeable, name)
            self.assertFalse(a.flags.owndata, name)
            self.assertEqual(a.ctypes.data, b.ctypes.data, name)  # the mapping, each time
        with self.assertRaises(ValueError):
            self.ds.features[0, 0] = 1

    def test_views_outlive_the_dataset_object(self):
        features = bulkgnn.Dataset(CORA).features
        gc.collect()
        self.assertEqual(features.shape, (2708, 1433))
        self.assertEqual(float(features[:, :10].sum()), float(self.ds.features[:, :10].sum()))

    def test_split_views_the_public_split(self):
        self.assertEqual(self.ds.splits, ["public"])
        train, valid, test = self.ds.split()
        self.assertEqual((len(train), len(valid), len(test)), (140, 500, 1000))
        np.testing.assert_array_equal(self.ds.split("public")[0], train)
        np.testing.assert_array_equal(self.ds.training_vertices(), train)
        self.assertFalse(train.flags.writeable)

    def test_an_unknown_split_is_a_value_error_listing_the_splits(self):
        with self.assertRaisesRegex(ValueError, "no split 'nope' .*public"):
            self.ds.split("nope")


def write_ogb_raw(directory, edges, num_nodes, meta=None):
    """An OGB raw directory of `edges` (source, target) without features."""
    raw = f"{directory}/raw"
    os.makedirs(raw)
    with gzip.open(f"{raw}/edge.csv.gz", "wt") as f:
        f.writelines(f"{s},{t}\n" for s, t in edges)
    with gzip.open(f"{raw}/num-node-list.csv.gz", "wt") as f:
        f.write(f"{num_nodes}\n")
    if meta is not None:
        with open(f"{directory}/meta.json", "w") as f:
            f.write(meta)


class UndirectedOrNot(unittest.TestCase):
    EDGES = [(0, 1), (1, 2), (2, 3)]

    def test_without_meta_json_the_edges_are_directed_and_a_warning_says_so(self):
        with tempfile.TemporaryDirectory() as tmp:
            write_ogb_raw(f"{tmp}/g", self.EDGES, 4)
            with self.assertWarnsRegex(UserWarning, "add_inverse_edges=True"):
                ds = bulkgnn.Dataset(f"{tmp}/g")
            self.assertEqual(ds.num_edges, 3)

    def test_add_inverse_edges_adds_the_reverses_and_silences_the_warning(self):
        with tempfile.TemporaryDirectory() as tmp:
            write_ogb_raw(f"{tmp}/g", self.EDGES, 4)
            with warnings.catch_warnings():
                warnings.simplefilter("error")
                self.assertEqual(bulkgnn.Dataset(f"{tmp}/g", add_inverse_edges=True).num_edges, 6)
                self.assertEqual(bulkgnn.Dataset(f"{tmp}/g", add_inverse_edges=False).num_edges, 3)

    def test_meta_json_decides_without_a_warning(self):
        with tempfile.TemporaryDirectory() as tmp:
            write_ogb_raw(f"{tmp}/g", self.EDGES, 4, meta='{"add_inverse_edge": "True"}')
            with warnings.catch_warnings():
                warnings.simplefilter("error")
                self.assertEqual(bulkgnn.Dataset(f"{tmp}/g").num_edges, 6)

    def test_a_converted_directory_opens_without_the_warning(self):
        with tempfile.TemporaryDirectory() as tmp:
            write_ogb_raw(f"{tmp}/g", self.EDGES, 4)
            subprocess.run([CLI, "convert", "--quiet", f"{tmp}/g", f"{tmp}/native"], check=True,
                           stdout=subprocess.DEVNULL)
            with warnings.catch_warnings():
                warnings.simplefilter("error")
                self.assertEqual(bulkgnn.Dataset(f"{tmp}/native").num_edges, 3)

    def test_the_embedded_default_refuses_it(self):
        with self.assertRaisesRegex(ValueError, "add_inverse_edges applies to an OGB raw"):
            bulkgnn.Dataset(add_inverse_edges=True)

    def test_a_native_directory_refuses_it_by_name(self):
        with tempfile.TemporaryDirectory() as tmp:
            write_native_dataset(f"{tmp}/tiny", [[1], [0, 2], [1]], np.eye(3), [0, 1, 0], [0, 1])
            with self.assertRaisesRegex(ValueError, "add_inverse_edges: .* is a native dataset"):
                bulkgnn.Dataset(f"{tmp}/tiny", add_inverse_edges=True)


class NativeDirectory(unittest.TestCase):
    def test_opens_what_was_written(self):
        with tempfile.TemporaryDirectory() as tmp:
            write_native_dataset(f"{tmp}/tiny", [[1], [0, 2], [1]], np.eye(3), [0, 1, 0], [0, 1])
            ds = bulkgnn.Dataset(f"{tmp}/tiny")
            np.testing.assert_array_equal(ds.indptr, [0, 1, 3, 4])
            np.testing.assert_array_equal(ds.indices, [1, 0, 2, 1])
            np.testing.assert_array_equal(ds.features, np.eye(3))
            np.testing.assert_array_equal(ds.split("fixed")[0], [0, 1])

    def test_a_missing_directory_is_an_error_naming_it(self):
        with self.assertRaisesRegex(bulkgnn.Error, "/no/such/dataset"):
            bulkgnn.Dataset("/no/such/dataset")


class EmbeddedDefault(unittest.TestCase):
    def test_is_the_cli_default_csbm(self):
        ds = bulkgnn.Dataset()
        self.assertEqual((ds.num_nodes, ds.num_features, ds.num_classes), (100000, 64, 8))
        self.assertEqual(ds.splits, ["random"])


if __name__ == "__main__":
    unittest.main()
