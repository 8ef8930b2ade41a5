"""bulkgnn.NeighborLoader: argument checking and defaults around the C++ loader."""

import functools
import operator
import os
import sys
import warnings

import numpy as np

from . import _bulkgnn
from ._data import from_pyg
from ._samplers import SAMPLERS, sampler_name

_UNSET = object()
_BACKENDS = ("cpu", "reference", "cuda")


def _backend_for(caller, device, backend):
    """The C++ back end that device= (torch's names: "cpu", "cuda", "cuda:N",
    a torch.device) and backend= ask for together."""
    if backend not in _BACKENDS:
        raise ValueError(f"{caller}: backend must be one of {', '.join(_BACKENDS)}; "
                         f"got {backend!r}")
    if device is None:
        return backend
    name = str(device)
    if name == "cpu":
        if backend == "cuda":
            raise ValueError(f"{caller}: device='cpu' and backend='cuda' disagree; give one")
        return backend
    if name != "cuda" and not name.startswith("cuda:"):
        raise ValueError(f"{caller}: device must be 'cpu' or 'cuda' (or a torch.device of "
                         f"either); got {device!r}")
    if backend == "reference":
        raise ValueError(f"{caller}: backend='reference' runs on the host; device={name!r} "
                         "asks for the GPU; give one")
    compiled, gpus, mine = _bulkgnn._gpu_support()
    if not gpus:
        raise ValueError(f"{caller}: device={name!r}: no GPU is visible" +
                         ("" if compiled else " (this build of bulkgnn has no CUDA back end)"))
    # The loader takes this process's GPU as the bulkgnn command does.
    if name != "cuda" and name != f"cuda:{mine}":
        raise ValueError(f"{caller}: device={name!r}: the loader runs on this process's GPU, "
                         f"cuda:{mine} (its rank on the node, modulo the {len(gpus)} it sees); "
                         "give 'cuda'")
    return "cuda"


def _pick(name, value, alias_name, alias_value, default):
    """The value of an argument that PyG spells differently; both is an error."""
    if value is not _UNSET and alias_value is not None:
        raise ValueError(f"NeighborLoader: give {name} or {alias_name}, not both")
    if value is not _UNSET:
        return value
    return default if alias_value is None else alias_value


def _integer(name, value, low, high=None):
    try:
        value = operator.index(value)
    except TypeError:
        raise ValueError(f"NeighborLoader: {name} must be an integer, got {value!r}") from None
    if value < low or (high is not None and value > high):
        bound = f"in [{low}, {high}]" if high is not None else f"at least {low}"
        raise ValueError(f"NeighborLoader: {name} must be {bound}, got {value}")
    return value


def _sampler_parameters(entry, given):
    """The sampler's own parameters from sampler_options, each checked by name and range."""
    if given is None:
        return {}
    if not isinstance(given, dict):
        raise ValueError(f"NeighborLoader: sampler_options must be a dict, got {given!r}")
    known = entry["parameters"]
    parameters = {}
    for name, value in given.items():
        if name not in known:
            takes = ", ".join(known) or "no parameters"
            raise ValueError(f"NeighborLoader: sampler_options: the {entry['name']} sampler has "
                             f"no parameter {name!r} (it takes {takes})")
        parameters[name] = _integer(f"sampler_options[{name!r}]", value, known[name]["min"],
                                    known[name]["max"])
    return parameters


def _seed_ids(name, seeds, num_nodes):
    """Seeds as a contiguous int32 array: ids, or a boolean mask over the nodes."""
    if isinstance(seeds, tuple) and len(seeds) == 2 and isinstance(seeds[0], str):
        raise ValueError(
            f"NeighborLoader: {name}=({seeds[0]!r}, ...) is PyG's form for a heterogeneous "
            "graph; a bulkgnn graph has one node type: pass the ids (or a mask) alone")
    array = np.asarray(seeds)
    if array.size == 0:
        raise ValueError(f"NeighborLoader: {name} is empty")
    if array.dtype == np.bool_:
        if array.shape != (num_nodes,):
            raise ValueError(
                f"NeighborLoader: {name} as a boolean mask needs one entry per node "
                f"({num_nodes}), got shape {array.shape}")
        array = np.flatnonzero(array)
        if array.size == 0:
            raise ValueError(f"NeighborLoader: {name} selects no node")
    elif not np.issubdtype(array.dtype, np.integer):
        raise ValueError(
            f"NeighborLoader: {name} must hold integer vertex ids or be a boolean mask, "
            f"got dtype {array.dtype}")
    if array.ndim != 1:
        raise ValueError(f"NeighborLoader: {name} must be one-dimensional, got shape {array.shape}")
    low, high = array.min(), array.max()
    if low < 0 or high >= num_nodes:
        bad = low if low < 0 else high
        raise ValueError(f"NeighborLoader: {name}: vertex {bad} is not in [0, {num_nodes})")
    return np.ascontiguousarray(array, dtype=np.int32)


def _pipeline_arguments(fanouts_name, fanouts, batch_size, shuffle, seed, bulk, threads,
                        sampler, sampler_options, replace, weighted, prefetch, backend, layers,
                        queue_bytes):
    """The C++ loaders' shared keyword arguments, each checked by name."""
    return {
        "fanouts": _fanouts(fanouts_name, fanouts),
        "batch_size": _integer("batch_size", batch_size, 1),
        "shuffle": bool(shuffle),
        "seed": _integer("seed", seed, 0, 2**32 - 1),
        "bulk": _integer("bulk", bulk, 1),
        "threads": 0 if threads is None else _integer("threads", threads, 1, 4096),
        "sampler": sampler,
        "replace": bool(replace),
        "weighted": bool(weighted),
        "prefetch": _integer("prefetch", prefetch, 1),
        "backend": backend,
        "sampler_parameters": _sampler_parameters(SAMPLERS[sampler], sampler_options),
        "layers": 0 if layers is None else _integer("layers", layers, 1, 64),
        "queue_bytes": 0 if queue_bytes is None else _integer("queue_bytes", queue_bytes, 1),
    }


def _fanouts(name, fanouts):
    try:
        hops = [operator.index(f) for f in fanouts]
    except TypeError:
        raise ValueError(
            f"NeighborLoader: {name} must be a list of integers, got {fanouts!r}") from None
    if not hops:
        raise ValueError(f"NeighborLoader: {name} is empty; give one count per hop, e.g. [15, 10]")
    return hops


def _warn_about_workers(num_workers):
    """PyG users pass num_workers by habit; the pipeline has its own threads."""
    num_workers = _integer("num_workers", num_workers, 0)
    if num_workers > 0:
        warnings.warn(
            f"NeighborLoader: num_workers={num_workers} is ignored: the loader samples and "
            "gathers on its own threads (threads=), so there are no worker processes",
            UserWarning, stacklevel=3)


def _without_empty_slices(seeds, batch_size, world_size):
    """The minibatches per epoch, 0 for all: a last minibatch with fewer seeds
    than ranks would hand some rank no seed, so every rank leaves it out."""
    if batch_size < world_size:
        raise ValueError(f"NeighborLoader: batch_size={batch_size} is smaller than world_size="
                         f"{world_size}: some rank would get no seed of a minibatch")
    count = -(-seeds // batch_size)
    last = seeds - (count - 1) * batch_size
    if last >= world_size:
        return 0
    if count == 1:
        raise ValueError(f"NeighborLoader: {seeds} seeds cannot give each of world_size="
                         f"{world_size} ranks a seed")
    warnings.warn(
        f"NeighborLoader: the last minibatch of each epoch has {last} seeds for {world_size} "
        f"ranks, so every rank leaves it out ({count - 1} minibatches of {count}); a batch "
        "size that divides the seeds, or fewer ranks, keeps it", UserWarning, stacklevel=3)
    return count - 1


def default_rank_and_world_size():
    """This process's place among data-parallel ranks: torch.distributed's when it
    is initialised, else the launcher's environment (Open MPI, MPICH/PMI,
    torchrun), else rank 0 of 1."""
    dist = sys.modules.get("torch.distributed")  # imported by whoever initialised it
    if dist is not None and dist.is_available() and dist.is_initialized():
        return dist.get_rank(), dist.get_world_size()
    for rank_name, size_name in (("OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE"),
                                 ("PMI_RANK", "PMI_SIZE"), ("RANK", "WORLD_SIZE")):
        if rank_name in os.environ and size_name in os.environ:
            return _environment_integer(rank_name), _environment_integer(size_name)
    return 0, 1


def _environment_integer(name):
    text = os.environ[name]
    try:
        return int(text)
    except ValueError:
        raise ValueError(f"NeighborLoader: the environment variable {name} must be an integer "
                         f"(the launcher sets it), got {text!r}") from None


class _Epochs:
    """Epochs over a C++ loader (self._core): one per iteration, counted from 0."""

    _epoch = 0

    def __iter__(self):
        """Starts the next epoch (ending one still running) and returns its iterator."""
        epoch = self._core.epoch(self._epoch)
        self._epoch += 1
        return epoch

    def __len__(self):
        return len(self._core)

    def set_epoch(self, epoch):
        """The next iteration runs this epoch (then epoch + 1, ...)."""
        self._epoch = _integer("epoch", epoch, 0, 2**32 - 1)

    @property
    def epoch(self):
        """The epoch the next iteration runs."""
        return self._epoch


class NeighborLoader(_Epochs):
    """Minibatches of a bulkgnn.Dataset from the C++ multistage pipeline
    (shuffle -> bulk sample -> gather features), which runs on its own threads
    without the GIL while Python consumes.

    Iterating runs one epoch; `len()` is its number of minibatches. Epochs are
    counted from 0 and advance by one per iteration; `set_epoch(e)` makes the
    next iteration epoch e (as torch's DistributedSampler). The minibatches
    depend only on (seed, epoch): the same for any bulk, prefetch or threads,
    and the same as `bulkgnn sample` draws.

    dataset      a bulkgnn.Dataset, or a torch_geometric Data (Dataset.from_pyg)
    seeds        vertex ids (any integer array, tensor or list) or a boolean mask
                 over the nodes; default: dataset.training_vertices() (the first
                 split's training vertices, or every vertex)
    fanouts      per hop from the seeds: neighbours per vertex (sage; -1 = all)
                 or vertices per minibatch (ladies, fastgcn)
    batch_size   seeds per minibatch (the last one may be smaller); for
                 "cluster-gcn", clusters per minibatch (PyG's ClusterLoader's
                 batch_size), whose seeds are the given seeds in them; for
                 "saint-node", "saint-edge" and "saint-rw", the budget (vertices,
                 edges or walk roots per subgraph, PyG's GraphSAINT samplers'
                 batch_size), the seeds the given seeds in each drawn subgraph,
                 mb.node_norm their loss weights (sum, do not average) and
                 edge_weight the normalised aggregation weights
    shuffle      shuffle the seeds each epoch (by seed and epoch); default True,
                 False where PyG's keywords are used ("cluster-gcn" and the
                 GraphSAINT samplers always shuffle or draw)
    seed         keys every random draw
    bulk         minibatches sampled together by one sampler call
    threads      kernel threads (None: every core)
    sampler      a name of bulkgnn.samplers(): "sage" (node-wise), "ladies" or
                 "fastgcn" (layer-wise), "random-walk", ..., or a sampler written
                 with bulkgnn.define_sampler
    layers       blocks per minibatch (None: one per hop); "shadow" takes any
                 count, the depth of the model run on its subgraph;
                 "cluster-gcn" takes fanouts of -1, one per layer
    sampler_options
                 the sampler's own parameters by name (bulkgnn.samplers() lists
                 them), e.g. {"walk_length": 3} for "random-walk"
    replace      node-wise: draw with replacement
    weighted     node-wise: draw in proportion to the dataset's edge weights
    prefetch     ready minibatches the pipeline may hold ahead of the consumer
    queue_bytes  bytes the queue of sampled bulks and the queue of ready minibatches
                 (features included) may each hold, at least one item; default
                 None: 1/64 of the memory available, between 32 and 128 MiB
                 (loader.queue_bytes says which)
    subgraph_cache
                 a directory where a sampler that prepares the whole graph once
                 (cluster-gcn's METIS clusters, saint-*'s presampled counts) keeps
                 what it made, named after the graph and its options, and finds
                 it next time (PyG's save_dir); default None: nowhere
    rank, world_size
                 default None: this process samples every minibatch of its
                 seeds whole, as PyG's loader does (under DDP, give each process
                 its own shard of the seeds; batch_size is per process). Given
                 (or "auto": torch.distributed if initialised, else the MPI or
                 torchrun environment), the exact data-parallel mode: each
                 minibatch hands this rank its slice (1/world_size) of the
                 seeds with exactly the sample the whole minibatch has for
                 them, so the ranks together see the single-process
                 minibatches; every rank gets len() of them, none empty (a last
                 minibatch with fewer seeds than ranks is left out on every
                 rank, with a warning). "cluster-gcn" and the GraphSAINT
                 samplers are the exception: a batch of clusters or a drawn
                 subgraph may hold fewer seeds than ranks (a small subgraph
                 none at all), and a rank whose slice is empty
                 (mb.batch_size == 0) must still take part in the step with a
                 zero gradient (a mean loss over no rows is NaN), as the
                 bulkgnn trainer does.
    backend      "cpu" or "reference" (the naive oracle kernels)
    device       "cpu" (None: the default) or "cuda" (a torch.device too): sampling
                 and gathering on this process's GPU, the graph and features
                 copied to it (device memory when they take at most a half and
                 a quarter of it, else pinned host memory read through UVA).
                 Each minibatch's seeds, labels, input_nodes, features and
                 blocks are CUDA arrays there (torch.from_dlpack gives CUDA tensors, no
                 copy), complete when handed out; what is computed from them
                 on the host (input_labels, PyG's edge_index) is a host array,
                 which to_pyg() and to_dgl() move to the GPU. The samplers
                 with GPU kernels only (sage, ladies, fastgcn, labor,
                 labor-star, random-walk, sampler programs). A minibatch's
                 buffers live while any of its arrays or tensors does (a
                 tensor kept after the loader stays valid) and are freed only
                 once the GPU has finished the work queued on it, torch's
                 streams' too, which costs a device-wide wait per minibatch.

    PyG's names are accepted too: num_neighbors (fanouts), input_nodes (seeds),
    weight_attr (weighted=True; the dataset has one edge weight array). Where
    num_neighbors or input_nodes is used, PyG's defaults hold: shuffle=False,
    and input_nodes=None (or left out) means every node. num_workers is
    accepted and ignored, with a warning where it asks for workers: the
    pipeline runs on its own threads (threads=).

    The first loader makes glibc keep freed buffers of up to 32 MiB for reuse
    (mallopt, as the bulkgnn command does), for the whole process: torch's too,
    which makes a PyG model's epochs faster for a little more memory at peak.
    """

    def __init__(self, dataset, seeds=_UNSET, fanouts=_UNSET, batch_size=1024, shuffle=_UNSET,
                 seed=0, bulk=32, threads=None, sampler="sage", replace=False, weighted=False,
                 prefetch=32, rank=None, world_size=None, backend="cpu", *, num_neighbors=None,
                 input_nodes=_UNSET, weight_attr=None, sampler_options=None, layers=None,
                 num_workers=0, queue_bytes=None, subgraph_cache=None, device=None):
        if hasattr(dataset, "edge_index") and not isinstance(dataset, _bulkgnn.Dataset):
            dataset = from_pyg(dataset)  # a PyG Data, viewed where its memory allows
        if not isinstance(dataset, _bulkgnn.Dataset):
            raise ValueError(
                "NeighborLoader: dataset must be a bulkgnn.Dataset or a torch_geometric Data, got "
                f"{type(dataset).__name__}")
        pyg_style = num_neighbors is not None or input_nodes is not _UNSET
        sampler = sampler_name(sampler, "NeighborLoader")
        clustered = SAMPLERS[sampler]["batches_subgraphs"]
        if shuffle is _UNSET:
            shuffle = clustered or not pyg_style
        _warn_about_workers(num_workers)
        if input_nodes is not _UNSET and seeds is not _UNSET:
            raise ValueError("NeighborLoader: give seeds or input_nodes, not both")
        if input_nodes is None or (pyg_style and input_nodes is _UNSET and seeds is _UNSET):
            seeds = np.arange(dataset.num_nodes)  # PyG: every node
        elif input_nodes is not _UNSET:
            seeds = input_nodes
        elif seeds is _UNSET:
            seeds = None
        fanouts = _pick("fanouts", fanouts, "num_neighbors", num_neighbors, [15, 10, 5])
        if weight_attr is not None:
            if dataset.edge_weight is None:
                raise ValueError(
                    f"NeighborLoader: weight_attr={weight_attr!r}, but the dataset has no edge "
                    "weights")
            weighted = True
        backend = _backend_for("NeighborLoader", device, backend)
        if rank == "auto" or world_size == "auto":
            default_rank, default_size = default_rank_and_world_size()
            rank = default_rank if rank in (None, "auto") else rank
            world_size = default_size if world_size in (None, "auto") else world_size
        elif rank is None and world_size is None:
            rank, world_size = 0, 1
        elif rank is None or world_size is None:
            raise ValueError("NeighborLoader: give rank and world_size together (or \"auto\")")
        # The C++ loader counts ranks in an int.
        world_size = _integer("world_size", world_size, 1, 2**31 - 1)
        rank = _integer("rank", rank, 0, world_size - 1)
        seed_ids = (dataset.training_vertices() if seeds is None else
                    _seed_ids("input_nodes" if input_nodes is not _UNSET else "seeds", seeds,
                              dataset.num_nodes))
        batch_size = _integer("batch_size", batch_size, 1)
        # A batch of clusters may hold fewer seeds than ranks: some rank's
        # slice is then empty (see the docstring).
        max_minibatches = 0 if clustered else _without_empty_slices(len(seed_ids), batch_size,
                                                                    world_size)
        if subgraph_cache is not None and not str(subgraph_cache):
            raise ValueError("NeighborLoader: subgraph_cache is an empty path; give a directory "
                             "or None")
        self._core = _bulkgnn.Loader(
            dataset, seed_ids, rank=rank, world_size=world_size, max_minibatches=max_minibatches,
            subgraph_cache="" if subgraph_cache is None else os.fspath(subgraph_cache),
            **_pipeline_arguments(
                "num_neighbors" if num_neighbors is not None else "fanouts", fanouts, batch_size,
                shuffle, seed, bulk, threads, sampler, sampler_options, replace, weighted,
                prefetch, backend, layers, queue_bytes))
        self.dataset = dataset
        self.rank = rank
        self.world_size = world_size
        # The byte bound of the sampled-bulk and ready-minibatch queues.
        self.queue_bytes = (_bulkgnn.default_queue_bytes() if queue_bytes is None else
                            queue_bytes)



@functools.cache
def neighbor_dataset_class():
    import torch.utils.data

    class NeighborDataset(torch.utils.data.IterableDataset):
        """NeighborLoader as a torch IterableDataset, for code that expects one:
        torch.utils.data.DataLoader(bulkgnn.NeighborDataset(ds, ...), batch_size=None).
        Keep num_workers=0: the loader runs its own threads, and worker
        processes would each run the whole epoch; a worker that tries raises
        RuntimeError, which the DataLoader passes on."""

        def __init__(self, *args, **kwargs):
            super().__init__()
            self.loader = NeighborLoader(*args, **kwargs)

        def __iter__(self):
            if torch.utils.data.get_worker_info() is not None:
                raise RuntimeError(
                    "bulkgnn.NeighborDataset: DataLoader(num_workers > 0) runs it in worker "
                    "processes, where each would sample the whole epoch on a pipeline forked "
                    "from this one (and its minibatches cannot be pickled back); use "
                    "num_workers=0: the loader samples and gathers on its own threads")
            return iter(self.loader)

        def __len__(self):
            return len(self.loader)

        def set_epoch(self, epoch):
            self.loader.set_epoch(epoch)

    NeighborDataset.__module__ = "bulkgnn"
    return NeighborDataset
