"""bulkgnn.ogb_link_split reads ogbl-* splits (torch files of OGB's layout, written
here as OGB writes them): collab/ppa/ddi's edge + edge_neg, citation2's source_node,
target_node and target_node_neg, extra per-edge arrays; bad files name themselves."""

import gzip
import json
import os
import subprocess
import tempfile
import unittest

import numpy as np

import bulkgnn
from support import CLI, CORA, requires_torch, torch


def write_split(root, split_type, parts):
    directory = os.path.join(root, "split", split_type)
    os.makedirs(directory)
    for name, part in parts.items():
        torch.save({k: torch.from_numpy(np.asarray(v)) for k, v in part.items()},
                   os.path.join(directory, f"{name}.pt"))


@requires_torch
class OgbLinkSplit(unittest.TestCase):
    def test_collab_layout_gives_edge_indices_shared_negatives_and_extras(self):
        with tempfile.TemporaryDirectory() as root:
            train = np.array([[0, 1], [1, 2], [2, 3]])
            valid = np.array([[0, 2]])
            test = np.array([[1, 3], [0, 3]])
            write_split(root, "time", {
                "train": {"edge": train, "weight": np.array([1, 2, 1]),
                          "year": np.array([2000, 2001, 2002])},
                "valid": {"edge": valid, "edge_neg": np.array([[3, 0], [2, 0]])},
                "test": {"edge": test, "edge_neg": np.array([[3, 1]])}})
            split = bulkgnn.ogb_link_split(root, num_nodes=4)
            self.assertTrue(np.array_equal(split["train"], train.T))
            self.assertEqual(split["train"].dtype, np.int64)
            self.assertTrue(np.array_equal(split["valid_negatives"], [[3, 2], [0, 0]]))
            self.assertTrue(np.array_equal(split["test"], test.T))
            self.assertTrue(np.array_equal(split["train_year"], [2000, 2001, 2002]))
            # The split's own directory reads the same.
            again = bulkgnn.ogb_link_split(os.path.join(root, "split", "time"))
            self.assertTrue(np.array_equal(again["test_negatives"], split["test_negatives"]))

    def test_citation2_layout_gives_each_positives_negative_targets(self):
        with tempfile.TemporaryDirectory() as root:
            write_split(root, "time", {
                "train": {"source_node": np.array([0, 1]), "target_node": np.array([1, 2])},
                "valid": {"source_node": np.array([2]), "target_node": np.array([3]),
                          "target_node_neg": np.array([[0, 1, 4]])},
                "test": {"source_node": np.array([3]), "target_node": np.array([0]),
                         "target_node_neg": np.array([[1, 2, 4]])}})
            split = bulkgnn.ogb_link_split(root)
            self.assertTrue(np.array_equal(split["train"], [[0, 1], [1, 2]]))
            self.assertEqual(split["valid_negative_targets"].shape, (1, 3))
            pos = np.array([0.9], dtype=np.float32)
            neg = np.array([[0.1, 0.95, 0.2]], dtype=np.float32)
            self.assertAlmostEqual(bulkgnn.mean_reciprocal_rank(pos, neg), 0.5)

    def test_numpy_arrays_and_the_split_dict_layout_read_alike(self):
        with tempfile.TemporaryDirectory() as root:
            directory = os.path.join(root, "split", "throughput")
            os.makedirs(directory)
            torch.save({"train": {"edge": np.array([[0, 1], [1, 2]])},
                        "valid": {"edge": np.array([[2, 3]]), "edge_neg": np.array([[0, 3]])},
                        "test": {"edge": np.array([[0, 2]]), "edge_neg": np.array([[1, 3]])}},
                       os.path.join(directory, "split_dict.pt"))
            split = bulkgnn.ogb_link_split(root, num_nodes=4)
            self.assertTrue(np.array_equal(split["train"], [[0, 1], [1, 2]]))
            self.assertTrue(np.array_equal(split["test_negatives"], [[1], [3]]))

    def test_the_graph_of_an_ogbl_directory_opens_beside_its_link_split(self):
        with tempfile.TemporaryDirectory() as root:
            raw = os.path.join(root, "raw")
            os.makedirs(raw)
            for name, text in (("edge.csv.gz", "0,1\n1,2\n2,3\n"),
                               ("num-node-list.csv.gz", "4\n"), ("num-edge-list.csv.gz", "3\n")):
                with gzip.open(os.path.join(raw, name), "wt") as f:
                    f.write(text)
            write_split(root, "time", {"train": {"edge": np.array([[0, 1]])},
                                       "valid": {"edge": np.array([[1, 2]])},
                                       "test": {"edge": np.array([[2, 3]])}})
            ds = bulkgnn.Dataset(root, add_inverse_edges=True)
            self.assertEqual((ds.num_nodes, ds.num_edges), (4, 6))
            split = bulkgnn.ogb_link_split(root, num_nodes=ds.num_nodes)
            self.assertTrue(np.array_equal(split["test"], [[2], [3]]))

    def test_bad_splits_name_the_file_or_the_choice(self):
        with tempfile.TemporaryDirectory() as root:
            with self.assertRaisesRegex(ValueError, "neither train.pt .or split_dict.pt. nor split/"):
                bulkgnn.ogb_link_split(root)
            write_split(root, "a", {"train": {"edge": np.array([[0, 9]])},
                                    "valid": {"edge": np.array([[0, 1]])},
                                    "test": {"edge": np.array([[1, 2]])}})
            write_split(root, "b", {"train": {"edge": np.array([0, 1])}})
            with self.assertRaisesRegex(ValueError, r"splits \['a', 'b'\]; name one"):
                bulkgnn.ogb_link_split(root)
            with self.assertRaisesRegex(ValueError, "train.pt: an edge holds vertex 9"):
                bulkgnn.ogb_link_split(root, split="a", num_nodes=4)
            with self.assertRaisesRegex(ValueError, "train.pt: 'edge' must be E x 2"):
                bulkgnn.ogb_link_split(root, split="b")
            with open(os.path.join(root, "split", "a", "valid.pt"), "w") as f:
                f.write("not a torch file")
            with self.assertRaisesRegex(ValueError, "valid.pt: not a readable torch file"):
                bulkgnn.ogb_link_split(root, split="a")


class StoredLinkSplit(unittest.TestCase):
    """save_link_split stores a split (random, or an ogbl-* one) for `bulkgnn train --task link
    --link-split-dir`; load_link_split reads it back with its message-passing graphs."""

    def graph(self):
        # 0-1, 1-2, 2-3, 3-0 both ways.
        source = np.array([0, 1, 1, 2, 2, 3, 3, 0])
        target = np.array([1, 0, 2, 1, 3, 2, 0, 3])
        return bulkgnn.Dataset.from_arrays(edge_index=np.stack([source, target]), num_nodes=4)

    def test_a_random_split_reads_back_as_made(self):
        ds = self.graph()
        split = bulkgnn.random_link_split(ds, valid_fraction=0.25, test_fraction=0.25, seed=4)
        with tempfile.TemporaryDirectory() as root:
            path = os.path.join(root, "split")
            bulkgnn.save_link_split(path, split, ds)
            read = bulkgnn.load_link_split(path, ds)
        for key in ("train", "valid", "test", "valid_negatives", "test_negatives"):
            self.assertTrue(np.array_equal(read[key], split[key]), key)
        for graph in ("train_graph", "test_graph"):
            for got, made in zip(read[graph], split[graph]):
                self.assertTrue(np.array_equal(got, made), graph)

    def test_an_ogb_style_split_without_negatives_and_bad_ones(self):
        ds = self.graph()
        with tempfile.TemporaryDirectory() as root:
            path = os.path.join(root, "ogb")
            bulkgnn.save_link_split(path, {"train": np.array([[0, 1, 2], [1, 2, 3]]),
                                           "valid": np.array([[3], [0]]),
                                           "test": np.array([[0], [2]])}, ds)
            read = bulkgnn.load_link_split(path, ds)
            self.assertEqual(read["valid_negatives"].shape, (2, 0))
            self.assertEqual(read["valid_negative_targets"].shape, (0, 0))
            self.assertTrue(read["undirected"])
            # ogbl-citation2's layout: each held-out positive's own negative targets.
            bulkgnn.save_link_split(path, {"train": np.array([[0, 1, 2], [1, 2, 3]]),
                                           "valid": np.array([[3], [0]]),
                                           "test": np.array([[0], [2]]),
                                           "test_negative_targets": np.array([[1, 3, 0]])}, ds)
            read = bulkgnn.load_link_split(path, ds)
            self.assertTrue(np.array_equal(read["test_negative_targets"], [[1, 3, 0]]))
            with self.assertRaisesRegex(ValueError, "must be positives x targets"):
                bulkgnn.save_link_split(path, {"train": np.array([[0], [1]]),
                                               "valid": np.zeros((2, 0)), "test": np.zeros((2, 0)),
                                               "valid_negative_targets": np.array([1, 2])}, ds)
            with self.assertRaisesRegex(bulkgnn.Error, "training edge 0 .0 -> 2. is not an edge"):
                bulkgnn.save_link_split(os.path.join(root, "bad"),
                                        {"train": np.array([[0], [2]]), "valid": np.zeros((2, 0)),
                                         "test": np.zeros((2, 0))}, ds)
            with self.assertRaisesRegex(ValueError, "split has no 'test'"):
                bulkgnn.save_link_split(os.path.join(root, "bad"),
                                        {"train": np.array([[0], [1]]),
                                         "valid": np.zeros((2, 0))}, ds)
            self.assertFalse(os.path.exists(os.path.join(root, "bad")))

    def test_the_cli_picks_the_best_epoch_by_mrr_where_the_split_ranks_by_targets(self):
        ds = bulkgnn.Dataset(CORA)
        split = bulkgnn.random_link_split(ds, seed=1)
        rng = np.random.default_rng(0)
        for part in ("valid", "test"):
            split[f"{part}_negative_targets"] = rng.integers(
                ds.num_nodes, size=(split[part].shape[1], 20))
            del split[f"{part}_negatives"]
        with tempfile.TemporaryDirectory() as root:
            path = os.path.join(root, "split")
            bulkgnn.save_link_split(path, split, ds)
            for select_by, metric in (("auto", "valid_mrr"), ("hits", "valid_hits@10")):
                metrics = os.path.join(root, f"{select_by}.json")
                done = subprocess.run(
                    [CLI, "train", str(CORA), "--task", "link", "--link-split-dir", path,
                     "--fanouts", "5,5", "--hidden", "16", "--epochs", "4", "--hits-k", "10",
                     "--select-by", select_by, "--metrics-out", metrics],
                    capture_output=True, text=True)
                self.assertEqual(done.returncode, 0, done.stdout + done.stderr)
                with open(metrics) as f:
                    record = json.load(f)
                final = record["final"]
                self.assertEqual(final["selected_by"], "mrr" if select_by == "auto" else "hits")
                scores = [e[metric] for e in record["epochs"]]
                self.assertEqual(final["best_epoch"], 1 + scores.index(max(scores)))
                best = record["epochs"][final["best_epoch"] - 1]
                self.assertEqual(final["test_mrr"], best["test_mrr"])
                self.assertEqual(final["test_hits@10"], best["test_hits@10"])
                if select_by == "auto":
                    self.assertIn("the best epoch is the one of the best valid MRR (the split's "
                                  "own negative targets", done.stdout)


if __name__ == "__main__":
    unittest.main()
