"""bulkgnn.LinkNeighborLoader: link prediction's minibatches, with PyG's keywords."""

import numbers

import numpy as np

from . import _bulkgnn
from ._data import from_pyg
from ._loader import _BACKENDS, _Epochs, _pipeline_arguments, _warn_about_workers
from ._samplers import sampler_name


def _edge_label_index(value, num_nodes):
    """The supervision edges as two contiguous int32 arrays (source, target)."""
    if isinstance(value, tuple) and len(value) == 2 and isinstance(value[0], (str, tuple)):
        raise ValueError(
            "LinkNeighborLoader: edge_label_index=(edge type, ...) is PyG's form for a "
            "heterogeneous graph; a bulkgnn graph has one edge type: pass the 2 x E index alone")
    if hasattr(value, "detach"):  # a torch tensor, wherever it lives
        value = value.detach().cpu().numpy()
    array = np.asarray(value)
    if array.ndim != 2 or array.shape[0] != 2:
        raise ValueError(
            f"LinkNeighborLoader: edge_label_index must have shape (2, E), got {array.shape}")
    if array.shape[1] == 0:
        raise ValueError("LinkNeighborLoader: edge_label_index holds no edge")
    if not np.issubdtype(array.dtype, np.integer):
        raise ValueError(
            f"LinkNeighborLoader: edge_label_index must hold integer vertex ids, got dtype "
            f"{array.dtype}")
    low, high = array.min(), array.max()
    if low < 0 or high >= num_nodes:
        bad = low if low < 0 else high
        column = int(np.flatnonzero((array == bad).any(axis=0))[0])
        raise ValueError(
            f"LinkNeighborLoader: edge_label_index: edge {column} has vertex {bad}, not in "
            f"[0, {num_nodes})")
    return (np.ascontiguousarray(array[0], dtype=np.int32),
            np.ascontiguousarray(array[1], dtype=np.int32))


def _every_edge(dataset):
    """Every stored edge (source, target) of the dataset, PyG's default edge_label_index."""
    indptr = np.asarray(dataset.indptr)
    source = np.ascontiguousarray(dataset.indices, dtype=np.int32)
    target = np.repeat(np.arange(dataset.num_nodes, dtype=np.int32), np.diff(indptr))
    if source.size == 0:
        raise ValueError("LinkNeighborLoader: the dataset has no edges to predict")
    return source, target


def _negative_sampling(neg_sampling, neg_sampling_ratio):
    """(mode, amount) from PyG's neg_sampling (a NegativeSampling, a dict, or a mode
    name) or neg_sampling_ratio (binary negatives); (binary, 0) for none."""
    if neg_sampling is not None and neg_sampling_ratio is not None:
        raise ValueError("LinkNeighborLoader: give neg_sampling or neg_sampling_ratio, not both")
    if neg_sampling_ratio is not None:
        if neg_sampling_ratio == 0:
            return "binary", 0.0  # PyG's old default: no negatives
        neg_sampling = {"mode": "binary", "amount": neg_sampling_ratio}
    if neg_sampling is None:
        return "binary", 0.0
    if isinstance(neg_sampling, str):
        neg_sampling = {"mode": neg_sampling}
    if isinstance(neg_sampling, dict):
        mode, amount = neg_sampling.get("mode"), neg_sampling.get("amount", 1)
        weight = neg_sampling.get("weight")
    else:  # torch_geometric.sampler.NegativeSampling
        mode, amount = getattr(neg_sampling, "mode", None), getattr(neg_sampling, "amount", 1)
        weight = getattr(neg_sampling, "weight", None)
    mode = getattr(mode, "value", mode)  # PyG's NegativeSamplingMode enum
    if mode not in ("binary", "triplet"):
        raise ValueError(
            f"LinkNeighborLoader: neg_sampling mode must be 'binary' or 'triplet', got {mode!r}")
    if weight is not None:
        raise ValueError(
            "LinkNeighborLoader: neg_sampling with a weight vector is not supported; use "
            "negative_distribution='degree' (in-degree^0.75) or the uniform default")
    if not isinstance(amount, numbers.Real) or not np.isfinite(amount) or amount <= 0:
        raise ValueError(
            f"LinkNeighborLoader: the negative sampling amount must be a positive number, got "
            f"{amount!r}")
    if mode == "triplet" and amount != int(amount):
        raise ValueError(
            f"LinkNeighborLoader: triplet negatives are a whole number per positive, got {amount}")
    return mode, float(amount)


class LinkNeighborLoader(_Epochs):
    """Link-prediction minibatches of a bulkgnn.Dataset from the C++ pipeline, laid
    out as PyG's LinkNeighborLoader yields them (mb.to_pyg()).

    Each minibatch holds batch_size supervision edges (positives) with negatives
    drawn beside them; the blocks grow from all their endpoints with any
    node-wise sampler, and the minibatch's positives are left out of its own
    blocks (exclude="reverse": both directions, as DGL's exclude="reverse_id"),
    so the model never reads the edge it predicts (PyG excludes nothing by default:
    pass exclude="none" for its blocks exactly). Every draw is keyed on
    (seed, epoch, minibatch, pair): the same minibatches for any bulk or threads.

    dataset          a bulkgnn.Dataset or a torch_geometric Data
    edge_label_index the supervision edges, 2 x E (source row 0); default: every
                     edge of the dataset
    edge_label       labels of those edges (None: 1); with binary negatives, labels
                     that start at 0 become edge_label + 1 and negatives get 0, as PyG
    num_neighbors / fanouts
                     neighbours per vertex per hop
    neg_sampling     "binary", "triplet", a dict {"mode", "amount"} or PyG's
                     NegativeSampling; neg_sampling_ratio=r is binary with amount r;
                     neither: no negatives
    negative_distribution
                     "uniform" or "degree" (in-degree^0.75)
    strict           redraw negatives that are edges of the graph or loops
    exclude          "reverse", "self" or "none"
    batch_size, shuffle, seed, bulk, threads, sampler, sampler_options, replace,
    weighted, prefetch, backend, layers, queue_bytes: as NeighborLoader's.

    Minibatch fields: edge_label_index (local ids: positions in input_nodes),
    edge_label, input_id (positions in edge_label_index), dst_neg_index
    (triplet); mb.to_pyg() adds them to the node fields as PyG does.
    """

    def __init__(self, data, num_neighbors=None, edge_label_index=None, edge_label=None,
                 neg_sampling=None, neg_sampling_ratio=None, batch_size=1, shuffle=False, *,
                 fanouts=None, seed=0, bulk=32, threads=None, sampler="sage",
                 sampler_options=None, replace=False, weighted=False, prefetch=32,
                 backend="cpu", layers=None, queue_bytes=None, negative_distribution="uniform",
                 strict=False, exclude="reverse", num_workers=0, device=None):
        if hasattr(data, "edge_index") and not isinstance(data, _bulkgnn.Dataset):
            data = from_pyg(data)
        if not isinstance(data, _bulkgnn.Dataset):
            raise ValueError("LinkNeighborLoader: data must be a bulkgnn.Dataset or a "
                             f"torch_geometric Data, got {type(data).__name__}")
        _warn_about_workers(num_workers)
        if device is not None and str(device) != "cpu":
            raise ValueError(
                f"LinkNeighborLoader: device={str(device)!r}: link minibatches are sampled on the "
                "host so far (each leaves its own edges out there); keep device='cpu' and move "
                "each batch to the GPU (mb.to_pyg().to('cuda'))")
        if num_neighbors is not None and fanouts is not None:
            raise ValueError("LinkNeighborLoader: give num_neighbors or fanouts, not both")
        hops = num_neighbors if num_neighbors is not None else fanouts
        if hops is None:
            raise ValueError("LinkNeighborLoader: num_neighbors is required, e.g. [10, 10]")
        sampler = sampler_name(sampler, "LinkNeighborLoader")
        if backend not in _BACKENDS:
            raise ValueError(f"LinkNeighborLoader: backend must be one of "
                             f"{', '.join(_BACKENDS)}; got {backend!r}")
        if negative_distribution not in ("uniform", "degree"):
            raise ValueError("LinkNeighborLoader: negative_distribution must be 'uniform' or "
                             f"'degree', got {negative_distribution!r}")
        if exclude not in ("reverse", "self", "none", None):
            raise ValueError("LinkNeighborLoader: exclude must be 'reverse', 'self' or 'none', "
                             f"got {exclude!r}")
        source, target = (_every_edge(data) if edge_label_index is None else
                          _edge_label_index(edge_label_index, data.num_nodes))
        mode, amount = _negative_sampling(neg_sampling, neg_sampling_ratio)
        labels = np.empty(0, dtype=np.float32)
        if edge_label is not None:
            if mode == "triplet":
                raise ValueError("LinkNeighborLoader: triplet negatives take no edge_label (PyG's "
                                 "triplet batches have none)")
            if hasattr(edge_label, "detach"):
                edge_label = edge_label.detach().cpu().numpy()
            labels = np.asarray(edge_label)
            if labels.shape != (source.size,):
                raise ValueError(
                    f"LinkNeighborLoader: edge_label must hold one label per edge "
                    f"({source.size}), got shape {labels.shape}")
            if not np.isfinite(labels).all():
                raise ValueError("LinkNeighborLoader: edge_label holds a NaN or infinity")
            labels = np.ascontiguousarray(labels, dtype=np.float32)
        self._core = _bulkgnn.LinkLoader(
            data, source, target, labels, negative_mode=mode, amount=amount,
            distribution=negative_distribution, strict=bool(strict), exclude=exclude or "none",
            **_pipeline_arguments(
                "num_neighbors" if num_neighbors is not None else "fanouts", hops, batch_size,
                shuffle, seed, bulk, threads, sampler, sampler_options, replace, weighted,
                prefetch, backend, layers, queue_bytes))
        self.dataset = data
