"""bulkgnn.Dataset from arrays in memory: numpy arrays, torch tensors or a PyG Data."""

import numpy as np

from . import _bulkgnn

_INT32_MAX = 2**31 - 1


def _host_array(name, value):
    """value as a numpy array, sharing a CPU tensor's or array's memory; a
    tensor on another device is copied to the host (it cannot be viewed)."""
    if hasattr(value, "detach") and hasattr(value, "numpy"):  # a torch tensor
        value = value.detach()
        if value.device.type != "cpu":
            value = value.cpu()
        return value.numpy()
    try:
        return np.asarray(value)
    except (TypeError, ValueError) as e:
        raise ValueError(f"Dataset.from_arrays: {name} is not an array: {e}") from None


def _array(name, value, dtype, ndim):
    """A C-contiguous array of dtype and ndim dimensions; no copy where value
    already is one. Integers narrowed to int32 must fit."""
    if value is None:
        return None
    array = _host_array(name, value)
    if array.ndim == 2 and ndim == 1 and array.shape[1] == 1:
        array = array[:, 0]  # PyG/OGB labels of shape [n, 1]
    if array.ndim != ndim:
        raise ValueError(f"Dataset.from_arrays: {name} must have {ndim} dimension(s), "
                         f"got shape {array.shape}")
    wanted = np.dtype(dtype)
    if wanted.kind in "iu" and array.dtype.kind not in "iu":
        raise ValueError(f"Dataset.from_arrays: {name} must hold integers, got dtype {array.dtype}")
    if wanted.kind == "f" and array.dtype.kind not in "iuf":
        raise ValueError(f"Dataset.from_arrays: {name} must hold numbers, got dtype {array.dtype}")
    if wanted == np.int32 and array.size and array.dtype != wanted:
        low, high = int(array.min()), int(array.max())
        if low < -_INT32_MAX - 1 or high > _INT32_MAX:
            bad = high if high > _INT32_MAX else low
            raise ValueError(f"Dataset.from_arrays: {name} holds {bad}, outside the 32-bit "
                             "range of vertex ids and labels")
    return np.ascontiguousarray(array, dtype=wanted)


def _ids(name, value, num_nodes):
    """Node ids (int32), from ids or a boolean mask over the nodes."""
    if value is None:
        return None
    array = _host_array(name, value)
    if array.dtype == np.bool_:
        if num_nodes is not None and array.shape != (num_nodes,):
            raise ValueError(f"Dataset.from_arrays: {name} as a boolean mask needs one entry per "
                             f"node ({num_nodes}), got shape {array.shape}")
        array = np.flatnonzero(array)
    return _array(name, array, np.int32, 1)


def _node_count(num_nodes, features, labels, indptr):
    """The node count to check masks against, where it is known yet."""
    for known in (num_nodes, None if features is None else len(features),
                  None if labels is None else len(labels),
                  None if indptr is None else len(indptr) - 1):
        if known is not None:
            return known
    return None


def from_arrays(*, edge_index=None, indptr=None, indices=None, num_nodes=None, edge_weight=None,
                features=None, labels=None, num_classes=None, train=None, valid=None, test=None,
                add_inverse_edges=False, name="in-memory", split_name="main"):
    """A Dataset over arrays in memory (numpy arrays or torch tensors).

    The graph is an edge_index (2 x E; edge i goes from edge_index[0, i] to
    edge_index[1, i], as in PyG, so row v lists v's in-neighbours), turned
    into CSR, or CSR itself (indptr int64 of num_nodes + 1 offsets, indices
    int32, each row's columns ascending). add_inverse_edges adds the reverse
    of every edge of an edge_index. edge_weight holds one positive weight per
    edge (or CSR entry). features (num_nodes x F), labels (one int per node,
    -1 = unlabelled) and the split's train/valid/test node ids (or boolean
    masks) are optional; num_nodes defaults to the features' rows, else the
    labels', else the CSR's.

    No copy is made of an array that already is C-contiguous with the dtype
    the dataset keeps (features float32, labels int32, indptr int64, indices
    int32): the dataset views it, so it must not change while the dataset
    lives. Other arrays are converted (a copy), tensors on a GPU copied to
    the host. Every array is checked as a dataset directory's files are.
    """
    if edge_index is not None and (indptr is not None or indices is not None):
        raise ValueError("Dataset.from_arrays: give edge_index or indptr and indices, not both")
    if edge_index is None and (indptr is None or indices is None):
        raise ValueError("Dataset.from_arrays: give the graph as edge_index, or as indptr and "
                         "indices")
    source = target = None
    if edge_index is not None:
        edges = _array("edge_index", edge_index, np.int64, 2)
        if edges.shape[0] != 2:
            raise ValueError("Dataset.from_arrays: edge_index must have shape [2, num_edges], "
                             f"got {edges.shape}")
        source, target = edges[0], edges[1]  # C-contiguous rows of a C-contiguous array
    features = _array("features", features, np.float32, 2)
    labels = _array("labels", labels, np.int32, 1)
    indptr = _array("indptr", indptr, np.int64, 1)
    known_nodes = _node_count(num_nodes, features, labels, indptr)
    parts = [_ids(part, value, known_nodes)
             for part, value in (("train", train), ("valid", valid), ("test", test))]
    splits = [] if all(p is None for p in parts) else [(split_name, *parts)]
    return _bulkgnn.Dataset._from_arrays(
        name=str(name), num_nodes=-1 if num_nodes is None else int(num_nodes),
        indptr=indptr, indices=_array("indices", indices, np.int32, 1), source=source,
        target=target, add_inverse_edges=bool(add_inverse_edges),
        edge_weight=_array("edge_weight", edge_weight, np.float32, 1), features=features,
        labels=labels, num_classes=0 if num_classes is None else int(num_classes),
        splits=splits)


def _pyg_edge_weight(data, weighted):
    """A PyG Data's edge weights: its edge_weight (unless weighted=False), or
    with weighted=True a one-column edge_attr; an edge_attr is not taken by
    default, as it often holds edge types or features rather than weights."""
    if weighted is False:
        return None
    weight = getattr(data, "edge_weight", None)
    if weight is not None or not weighted:
        return weight
    attr = getattr(data, "edge_attr", None)
    if attr is not None and (attr.dim() == 1 or (attr.dim() == 2 and attr.size(1) == 1)):
        return attr.reshape(-1)
    raise ValueError("Dataset.from_pyg: weighted=True, but data has neither edge_weight nor "
                     "a one-column edge_attr")


def from_pyg(data, *, add_inverse_edges=False, name="pyg", weighted=None):
    """A Dataset over a torch_geometric.data.Data: edge_index, x, y and the
    train_mask/val_mask/test_mask (split "main") are viewed where their
    memory allows (Dataset.from_arrays). Edge weights: edge_weight where the
    Data has one (None) or must have one (True: else a one-column
    edge_attr), none with weighted=False."""
    if not hasattr(data, "edge_index"):
        raise ValueError(f"Dataset.from_pyg: expected a torch_geometric Data with edge_index, got "
                         f"{type(data).__name__}")
    weight = _pyg_edge_weight(data, weighted)
    return from_arrays(
        edge_index=data.edge_index, num_nodes=data.num_nodes, edge_weight=weight,
        features=getattr(data, "x", None), labels=getattr(data, "y", None),
        train=getattr(data, "train_mask", None), valid=getattr(data, "val_mask", None),
        test=getattr(data, "test_mask", None), add_inverse_edges=add_inverse_edges, name=name)
