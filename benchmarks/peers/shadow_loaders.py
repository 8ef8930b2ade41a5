"""ShaDow-GNN side by side: bulkgnn.NeighborLoader(sampler="shadow"), DGL's
ShaDowKHopSampler and PyG's ShaDowKHopSampler on the same data, seeds and fanouts.

Run with the peer environment (benchmarks/peers/setup_venv.sh) and bulkgnn's Python
package on the path:

    PYTHONPATH=build/python ~/.cache/bulkgnn-peers-venv/bin/python \\
        benchmarks/peers/shadow_loaders.py loader ../shared/data/facebook \\
        ../shared/data/coauthor-cs
    PYTHONPATH=build/python ~/.cache/bulkgnn-peers-venv/bin/python \\
        benchmarks/peers/shadow_loaders.py train ../shared/data/facebook

Every training vertex of the dataset's split a seed, 512 per minibatch, shuffled, two hops
of 10 then 5 neighbours from the seeds; 2 threads, every loader in the process
(num_workers=0). bulkgnn and DGL induce one subgraph on the union of the vertices a
minibatch's seeds reach (bulkgnn's minibatch keeps what the seeds' two layers read of it);
PyG's ShaDowKHopSampler (depth 2, 10 neighbours at each hop: it takes one count) gives each
seed a subgraph of its own and batches them.

  loader  the median epoch over --repetitions, the systems alternating, the subgraph's
          features touched; vertices and edges per minibatch as each hands them to a model.
  train   the same PyG model (two SAGEConv layers, hidden 128, dropout 0.5, Adam 0.01) run
          on each minibatch's subgraph, the loss on its seeds' rows, fed by each loader;
          evaluation over the whole graph with the same model (as bulkgnn's trainer
          evaluates); --seeds seeds, --epochs epochs; test accuracy at the epoch of the
          best validation accuracy.
"""

import argparse
import sys

import numpy as np
import torch

import bulkgnn
from alternating import (accuracy_cells, alternate, fit_and_evaluate, loader_or_train_arguments,
                         seeds_of, write_rows)
from cluster_loaders import Model, edge_index_of, split_masks

BATCH = 512
FANOUTS = [10, 5]


def bulkgnn_loader(ds, train, seed=0):
    return bulkgnn.NeighborLoader(ds, input_nodes=train, num_neighbors=FANOUTS, batch_size=BATCH,
                                  shuffle=True, sampler="shadow", threads=2, seed=seed)


def consume_bulkgnn(loader):
    vertices = edges = minibatches = 0
    for mb in loader:
        batch = mb.to_pyg()
        float(batch.x[0, 0])
        vertices += int(batch.num_nodes)
        edges += int(batch.edge_index.shape[1])
        minibatches += 1
    return vertices / minibatches, edges / minibatches


def dgl_loader(ds, train, features):
    import dgl
    edge_index = edge_index_of(ds)
    graph = dgl.graph((edge_index[0], edge_index[1]), num_nodes=ds.num_nodes)
    # DGL lists fanouts input-most first; bulkgnn from the seeds.
    sampler = dgl.dataloading.ShaDowKHopSampler(list(reversed(FANOUTS)))
    loader = dgl.dataloading.DataLoader(graph, torch.from_numpy(train.astype(np.int64)), sampler,
                                        batch_size=BATCH, shuffle=True, num_workers=0)
    return loader, features


def consume_dgl(parts):
    loader, features = parts
    vertices = edges = minibatches = 0
    for input_nodes, _, subgraph in loader:
        float(features[input_nodes][0, 0])
        vertices += len(input_nodes)
        edges += int(subgraph.num_edges())
        minibatches += 1
    return vertices / minibatches, edges / minibatches


def pyg_loader(ds, features, labels=None):
    from torch_geometric.data import Data
    from torch_geometric.loader import ShaDowKHopSampler
    data = Data(x=features, edge_index=edge_index_of(ds), y=labels, num_nodes=ds.num_nodes)
    return ShaDowKHopSampler(data, depth=len(FANOUTS), num_neighbors=FANOUTS[0],
                             node_idx=split_masks(ds)[0], batch_size=BATCH, shuffle=True,
                             num_workers=0)


def consume_pyg(loader):
    vertices = edges = minibatches = 0
    for batch in loader:
        float(batch.x[0, 0])
        vertices += int(batch.num_nodes)
        edges += int(batch.edge_index.shape[1])
        minibatches += 1
    return vertices / minibatches, edges / minibatches


def measure_loaders(path, args):
    ds = bulkgnn.Dataset(path)
    train = np.asarray(ds.training_vertices())
    features = torch.from_numpy(np.array(ds.features))
    systems = {"bulkgnn shadow": (bulkgnn_loader(ds, train), consume_bulkgnn),
               "DGL ShaDowKHopSampler": (dgl_loader(ds, train, features), consume_dgl),
               "PyG ShaDowKHopSampler": (pyg_loader(ds, features), consume_pyg)}
    seconds, counts, medians = alternate(systems, args.repetitions)
    rows = []
    for name in systems:
        vertices, edges = counts[name]
        ratio = medians[name] / medians["bulkgnn shadow"]
        rows.append({"dataset": ds.name, "system": name, "seconds_per_epoch": medians[name],
                     "times_bulkgnn": ratio, "vertices_per_minibatch": vertices,
                     "edges_per_minibatch": edges, "all_seconds": seconds[name]})
        print(f"| {ds.name} | {name} | {medians[name]:.3f} | {ratio:.1f}x | {vertices:,.0f} | "
              f"{edges:,.0f} |", flush=True)
    return rows


def training_batches(ds, train, features, labels, fed_by, seed):
    """A function giving one epoch of fit_and_evaluate's batches from `fed_by`'s loader:
    the subgraph a model runs on, where its seeds are in it, and their labels."""
    if fed_by == "bulkgnn":
        loader = bulkgnn_loader(ds, train, seed)

        def batches():
            for mb in loader:
                batch = mb.to_pyg()
                yield (batch.x, batch.edge_index), slice(0, batch.batch_size), \
                    batch.y[:batch.batch_size].long(), None
    elif fed_by == "dgl":
        loader, _ = dgl_loader(ds, train, features)

        def batches():
            # to_block puts the seeds first, and the subgraph keeps that order.
            for input_nodes, seeds, subgraph in loader:
                assert torch.equal(input_nodes[:len(seeds)], seeds)
                source, target = subgraph.edges()
                yield (features[input_nodes], torch.stack([source, target])), \
                    slice(0, len(seeds)), labels[seeds], None
    elif fed_by == "pyg":
        loader = pyg_loader(ds, features, labels)

        def batches():
            # PyG's collate keeps the roots' labels only.
            for batch in loader:
                yield (batch.x, batch.edge_index), batch.root_n_id, batch.y, None
    else:
        raise ValueError(f"--fed-by {fed_by}: not one of {','.join(FED_BY)}")
    return batches


def train_one(ds, seed, fed_by, epochs):
    import dgl
    torch.manual_seed(seed)
    dgl.seed(seed)
    train = np.asarray(ds.training_vertices())
    features = torch.from_numpy(np.array(ds.features))
    labels = torch.from_numpy(np.asarray(ds.labels)).long()
    edge_index = edge_index_of(ds)
    batches = training_batches(ds, train, features, labels, fed_by, seed)
    model = Model(features.shape[1], ds.num_classes)
    return {"seed": seed, **fit_and_evaluate(model, batches, (features, edge_index), labels,
                                             split_masks(ds), epochs)}


FED_BY = ("bulkgnn", "dgl", "pyg")


def measure_training(path, args):
    ds = bulkgnn.Dataset(path)
    rows = []
    for fed_by in args.fed_by or FED_BY:
        runs = [train_one(ds, seed, fed_by, args.epochs) for seed in seeds_of(args)]
        print(f"| {ds.name} | {fed_by} | {accuracy_cells(runs)}", flush=True)
        rows.append({"dataset": ds.name, "fed_by": fed_by, "runs": runs})
    return rows


def loaders_of(text):
    """--fed-by's value: names of FED_BY, comma-separated."""
    names = text.split(",")
    unknown = [name for name in names if name not in FED_BY]
    if unknown:
        raise argparse.ArgumentTypeError(f"{','.join(unknown)}: not one of {','.join(FED_BY)}")
    if len(set(names)) < len(names):
        raise argparse.ArgumentTypeError(f"{text}: a loader named twice")
    return names


def main():
    args = loader_or_train_arguments(
        __doc__, epochs=20,
        extra=lambda parser: parser.add_argument(
            "--fed-by", type=loaders_of,
            help="train: the loaders feeding the model, of " + ",".join(FED_BY) +
                 " (default: all)"))
    if args.mode == "loader" and args.fed_by is not None:
        sys.exit("--fed-by applies to the train mode")
    if args.mode == "loader":
        print("| dataset | loader | s/epoch (median) | × bulkgnn | vertices/minibatch "
              "| edges/minibatch |")
        print("|---|---|---|---|---|---|")
        rows = [row for path in args.datasets for row in measure_loaders(path, args)]
    else:
        print("| dataset | PyG model fed by | test accuracy | s/epoch |")
        print("|---|---|---|---|")
        rows = [row for path in args.datasets for row in measure_training(path, args)]
    write_rows(rows, args.json)


if __name__ == "__main__":
    main()
