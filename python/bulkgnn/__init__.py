"""bulkgnn from Python: memory-mapped datasets and the multistage C++ loader.

    import bulkgnn, torch
    ds = bulkgnn.Dataset("../shared/data/cora")   # or Dataset.from_pyg(data), from_arrays(...)
    loader = bulkgnn.NeighborLoader(ds, ds.split()[0], fanouts=[10, 10], batch_size=64)
    for mb in loader:
        x = torch.from_dlpack(mb.features)   # no copy: the loader's buffer

Minibatch arrays (bulkgnn.Array) hand their memory to torch or numpy through
DLPack; mb.to_pyg() and mb.to_dgl() give what PyG's and DGL's loaders yield.
bulkgnn.LinkNeighborLoader gives link-prediction minibatches (PyG's keywords), and
bulkgnn.random_link_split splits a dataset's edges as PyG's RandomLinkSplit (and
bulkgnn.ogb_link_split reads an ogbl-* dataset's own split; bulkgnn.save_link_split
stores either for `bulkgnn train --task link --link-split-dir`, load_link_split reads it),
bulkgnn.hits_at_k and bulkgnn.mean_reciprocal_rank score as OGB's link Evaluator, and
bulkgnn.node2vec_walks draws node2vec's walks for an embedding trainer.
bulkgnn.define_sampler writes a new sampler from the matrix operations the built-in
ones are made of, run in bulk by the C++ pipeline (bulkgnn.load_sampler_program reads
one saved for the CLI's --sampler-program).
"""

from ._bulkgnn import (Array, Block, Dataset, Epoch, Error, Minibatch, RunDigest, hits_at_k,
                       load_link_split, mean_reciprocal_rank, node2vec_walks, random_link_split,
                       samplers, save_link_split)
from ._data import from_arrays as _from_arrays, from_pyg as _from_pyg
from ._link_loader import LinkNeighborLoader
from ._ogb_link import ogb_link_split
from ._loader import NeighborLoader
from ._program import Hop, SamplerProgram, define_sampler, load_sampler_program

Dataset.from_arrays = staticmethod(_from_arrays)
Dataset.from_pyg = staticmethod(_from_pyg)

__all__ = [
    "Array",
    "Block",
    "Dataset",
    "Epoch",
    "Error",
    "Hop",
    "LinkNeighborLoader",
    "Minibatch",
    "NeighborDataset",
    "NeighborLoader",
    "RunDigest",
    "SamplerProgram",
    "define_sampler",
    "hits_at_k",
    "load_link_split",
    "load_sampler_program",
    "mean_reciprocal_rank",
    "node2vec_walks",
    "ogb_link_split",
    "random_link_split",
    "samplers",
    "save_link_split",
]


def __getattr__(name):
    # NeighborDataset subclasses torch's IterableDataset: torch is imported
    # only when it is asked for.
    if name == "NeighborDataset":
        from ._loader import neighbor_dataset_class

        return neighbor_dataset_class()
    raise AttributeError(f"module 'bulkgnn' has no attribute {name!r}")
