"""OGB's link-prediction splits (ogbl-collab, -ppa, -ddi, -citation2) as arrays.

An ogbl-* download holds its graph in the OGB raw layout that bulkgnn.Dataset reads
(raw/edge.csv.gz; give add_inverse_edges=True for the undirected ones) and its split as
torch files, split/<type>/{train,valid,test}.pt, each a dict of tensors. torch is imported
only here, when a split is read.
"""

import os

import numpy as np


def _edges(part, name, path):
    """A 2 x E int64 array from a part's 'edge' (E x 2) or 'source_node'/'target_node'."""
    if "edge" in part:
        edges = np.asarray(part["edge"], dtype=np.int64)
        if edges.ndim != 2 or edges.shape[1] != 2:
            raise ValueError(f"ogb_link_split: {path}: '{name}' must be E x 2, got shape "
                             f"{edges.shape}")
        return np.ascontiguousarray(edges.T)
    if "source_node" in part and "target_node" in part:
        source = np.asarray(part["source_node"], dtype=np.int64).reshape(-1)
        target = np.asarray(part["target_node"], dtype=np.int64).reshape(-1)
        if source.shape != target.shape:
            raise ValueError(f"ogb_link_split: {path}: {len(source)} source_node but "
                             f"{len(target)} target_node")
        return np.stack([source, target])
    raise ValueError(f"ogb_link_split: {path} holds neither 'edge' nor 'source_node' and "
                     f"'target_node' (keys: {sorted(part)})")


def _load(path):
    """A torch file of OGB's: a dict of tensors or numpy arrays (pickled numpy is why it is
    not loaded weights-only, torch 2.6's default: it is the user's own download)."""
    import torch
    try:
        part = torch.load(path, map_location="cpu", weights_only=False)
    except Exception as e:  # noqa: BLE001 - a corrupt file raises anything
        raise ValueError(f"ogb_link_split: {path}: not a readable torch file "
                         f"({type(e).__name__}: {e})") from None
    if not isinstance(part, dict):
        raise ValueError(f"ogb_link_split: {path} holds a {type(part).__name__}, not OGB's dict "
                         "of tensors")
    return {key: (value.numpy() if hasattr(value, "numpy") else value)
            for key, value in part.items()}


def _check_ids(array, num_nodes, what, path):
    if num_nodes is not None and array.size and (array.min() < 0 or array.max() >= num_nodes):
        bad = array.min() if array.min() < 0 else array.max()
        raise ValueError(f"ogb_link_split: {path}: {what} holds vertex {bad}, outside the "
                         f"graph's [0, {num_nodes})")


def ogb_link_split(path, split=None, num_nodes=None):
    """The link split of an ogbl-* directory as bulkgnn.random_link_split lays one out:
    2 x E int64 edge indices "train", "valid" and "test"; "valid_negatives" and
    "test_negatives" (2 x N, OGB's shared negatives, as ogbl-collab/-ppa/-ddi give them in
    'edge_neg'), or "valid_negative_targets" and "test_negative_targets" (P x K, each
    positive's own corrupted targets, ogbl-citation2's 'target_node_neg'), and any other
    per-edge array of the files (ogbl-collab's 'weight', 'year') as "<part>_<key>".

    `path` is the dataset directory (holding split/) or its split/<type> directory; `split`
    names the type where split/ holds several. With `num_nodes` (say, len of the Dataset),
    every id is checked against it. Score with bulkgnn.hits_at_k (shared negatives) or
    bulkgnn.mean_reciprocal_rank (negative targets), as OGB's Evaluator does."""
    directory = os.fspath(path)
    if not any(os.path.exists(os.path.join(directory, f)) for f in ("train.pt",
                                                                    "split_dict.pt")):
        root = os.path.join(directory, "split")
        if not os.path.isdir(root):
            raise ValueError(f"ogb_link_split: {directory} holds neither train.pt (or "
                             "split_dict.pt) nor split/ (an ogbl-* download does)")
        types = sorted(t for t in os.listdir(root) if os.path.isdir(os.path.join(root, t)))
        if split is None:
            if len(types) != 1:
                raise ValueError(f"ogb_link_split: {root} holds splits {types}; name one with "
                                 "split=")
            split = types[0]
        if split not in types:
            raise ValueError(f"ogb_link_split: {root} has no split '{split}' (available: "
                             f"{types})")
        directory = os.path.join(root, split)
    # OGB's newer layout holds the three parts in one split_dict.pt.
    whole = os.path.join(directory, "split_dict.pt")
    parts = _load(whole) if not os.path.exists(os.path.join(directory, "train.pt")) and \
        os.path.exists(whole) else None
    result = {}
    for part_name in ("train", "valid", "test"):
        file = os.path.join(directory, f"{part_name}.pt")
        if parts is not None:
            if part_name not in parts or not isinstance(parts[part_name], dict):
                raise ValueError(f"ogb_link_split: {whole} holds no '{part_name}' dict")
            part, file = parts[part_name], whole
        elif not os.path.exists(file):
            raise ValueError(f"ogb_link_split: {file} is missing")
        else:
            part = _load(file)
        edges = _edges(part, "edge", file)
        _check_ids(edges, num_nodes, "an edge", file)
        result[part_name] = edges
        if "edge_neg" in part:
            negatives = _edges({"edge": part["edge_neg"]}, "edge_neg", file)
            _check_ids(negatives, num_nodes, "a negative", file)
            result[f"{part_name}_negatives"] = negatives
        if "target_node_neg" in part:
            targets = np.ascontiguousarray(np.asarray(part["target_node_neg"], dtype=np.int64))
            if targets.ndim != 2 or targets.shape[0] != edges.shape[1]:
                raise ValueError(f"ogb_link_split: {file}: target_node_neg must be "
                                 f"{edges.shape[1]} x K, got shape {targets.shape}")
            _check_ids(targets, num_nodes, "a negative target", file)
            result[f"{part_name}_negative_targets"] = targets
        for key, value in part.items():
            if key in ("edge", "edge_neg", "source_node", "target_node", "target_node_neg"):
                continue
            result[f"{part_name}_{key}"] = np.asarray(value)
    return result
