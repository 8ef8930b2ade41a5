"""PinSAGE's random-walk neighbours side by side: bulkgnn.NeighborLoader(sampler="pinsage")
and DGL's RandomWalkNeighborSampler, each hop's frontier made into a block as DGL's PinSAGE
example does, on the same data, seeds and settings.

Run with the peer environment (benchmarks/peers/setup_venv.sh) and bulkgnn's Python
package on the path:

    PYTHONPATH=build/python ~/.cache/bulkgnn-peers-venv/bin/python \\
        benchmarks/peers/pinsage_loaders.py ../shared/data/facebook ../shared/data/coauthor-cs

Both: every training vertex of the dataset's split a seed, 512 per minibatch, shuffled, two
hops of the 10 most visited vertices of 10 walks of at most 3 steps (termination chance 0.5
after each step), visit counts as edge weights, the input vertices' features touched; 2
threads. DGL draws each hop with RandomWalkNeighborSampler on the destinations, then
dgl.to_block; its DataLoader runs in the process (num_workers=0). The median epoch over
--repetitions, the systems alternating.
"""

import numpy as np
import torch

import bulkgnn
from alternating import alternated_rows, loader_arguments, write_rows

BATCH = 512
FANOUTS = [10, 10]
WALKS = 10
TRAVERSALS = 3
TERMINATION = 0.5


def bulkgnn_loader(ds, train):
    return bulkgnn.NeighborLoader(
        ds, input_nodes=train, num_neighbors=FANOUTS, batch_size=BATCH, shuffle=True,
        sampler="pinsage", threads=2,
        sampler_options={"walks": WALKS, "traversals": TRAVERSALS,
                         "termination_percent": round(TERMINATION * 100)})


class PinsageBlocks:
    """DGL's PinSAGE example's block sampler on a homogeneous graph: per hop,
    the destinations' random-walk neighbours as a frontier, then a block."""

    def __init__(self, graph):
        import dgl
        self.samplers = [dgl.sampling.RandomWalkNeighborSampler(
            graph, TRAVERSALS, TERMINATION, WALKS, fanout) for fanout in FANOUTS]

    def sample(self, graph, seeds):
        import dgl
        blocks = []
        for sampler in self.samplers:
            frontier = sampler(seeds)
            block = dgl.to_block(frontier, seeds)
            blocks.insert(0, block)
            seeds = block.srcdata[dgl.NID]
        return seeds, blocks


def dgl_loader(ds, train):
    import dgl
    indptr, indices = np.asarray(ds.indptr), np.asarray(ds.indices)
    targets = np.repeat(np.arange(ds.num_nodes, dtype=np.int64), np.diff(indptr))
    # DGL walks along out-edges: an edge from each vertex to its in-neighbours.
    graph = dgl.graph((torch.from_numpy(targets), torch.from_numpy(indices.astype(np.int64))),
                      num_nodes=ds.num_nodes)
    features = torch.from_numpy(np.asarray(ds.features))
    blocks = PinsageBlocks(graph)
    loader = torch.utils.data.DataLoader(torch.from_numpy(train.astype(np.int64)),
                                         batch_size=BATCH, shuffle=True)
    return graph, blocks, loader, features


def consume_bulkgnn(loader):
    edges = 0
    for mb in loader:
        float(np.asarray(mb.features)[0, 0])
        edges += sum(int(b.num_edges) for b in mb.blocks)
    return edges


def consume_dgl(parts):
    graph, blocks, loader, features = parts
    edges = 0
    for seeds in loader:
        inputs, sampled = blocks.sample(graph, seeds)
        float(features[inputs][0, 0])
        edges += sum(int(b.num_edges()) for b in sampled)
    return edges


def measure(path, args):
    ds = bulkgnn.Dataset(path)
    train = np.asarray(ds.training_vertices())
    systems = {"bulkgnn pinsage": (bulkgnn_loader(ds, train), consume_bulkgnn),
               "DGL RandomWalkNeighborSampler": (dgl_loader(ds, train), consume_dgl)}
    return alternated_rows(ds.name, systems, args.repetitions, "bulkgnn pinsage")


def main():
    args = loader_arguments(__doc__)
    print("| dataset | loader | s/epoch (median) | × bulkgnn | block edges/epoch |")
    print("|---|---|---|---|---|")
    rows = [row for path in args.datasets for row in measure(path, args)]
    write_rows(rows, args.json)


if __name__ == "__main__":
    main()
