"""What the Python tests share: data paths, a tiny native dataset, torch."""

import json
import os
import pathlib
import unittest

import numpy as np

SHARED_DATA = pathlib.Path(os.environ.get("BULKGNN_SHARED_DATA", "../shared/data"))
CORA = SHARED_DATA / "cora"
CLI = os.environ.get("BULKGNN_CLI", "build/tools/bulkgnn")

try:
    import torch
except ImportError:
    torch = None

requires_torch = unittest.skipIf(
    torch is None, "torch is not installed (Debian: python3-torch, which install_deps.sh installs)")


def write_native_dataset(directory, in_neighbours, features, labels, train):
    """A native dataset: row v of the graph lists the in-neighbours of v."""
    directory = pathlib.Path(directory)
    (directory / "split" / "fixed").mkdir(parents=True)
    indptr = np.concatenate([[0], np.cumsum([len(r) for r in in_neighbours])]).astype(np.int64)
    indices = np.array([u for row in in_neighbours for u in sorted(row)], dtype=np.int32)
    np.save(directory / "indptr.npy", indptr)
    np.save(directory / "indices.npy", indices)
    np.save(directory / "features.npy", np.asarray(features, dtype=np.float32))
    np.save(directory / "labels.npy", np.asarray(labels, dtype=np.int32))
    others = [v for v in range(len(in_neighbours)) if v not in train]
    for part, ids in (("train", train), ("valid", others[:1]), ("test", others[1:2])):
        np.save(directory / "split" / "fixed" / f"{part}.npy", np.asarray(ids, dtype=np.int32))
    manifest = {"format": "bulkgnn-native", "version": 1, "name": directory.name,
                "num_nodes": len(in_neighbours), "num_edges": int(indptr[-1]),
                "num_features": int(np.shape(features)[1]), "num_classes": int(max(labels)) + 1,
                "splits": ["fixed"]}
    (directory / "manifest.json").write_text(json.dumps(manifest))
    return directory


def sampled_pairs(mb):
    """Every sampled edge of the minibatch as global (source, target) pairs."""
    edge_index, _, _ = mb._pyg_edges()
    local = edge_index.numpy()
    nodes = mb.input_nodes.numpy()
    return set(zip(nodes[local[0]].tolist(), nodes[local[1]].tolist()))


def positives_of(mb):
    """A link minibatch's positive pairs as global (sources, targets)."""
    nodes = mb.input_nodes.numpy()
    index = mb.edge_label_index.numpy()
    count = len(mb.input_id.numpy())
    return nodes[index[0, :count]], nodes[index[1, :count]]
