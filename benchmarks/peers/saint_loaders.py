"""GraphSAINT side by side: bulkgnn.NeighborLoader(sampler="saint-rw"/"saint-node"),
PyG's GraphSAINTRandomWalkSampler/GraphSAINTNodeSampler and DGL's SAINTSampler on the
same data, budget, walk length, steps and coverage.

Run with the peer environment (benchmarks/peers/setup_venv.sh) and bulkgnn's Python
package on the path:

    PYTHONPATH=build/python ~/.cache/bulkgnn-peers-venv/bin/python \\
        benchmarks/peers/saint_loaders.py loader ../shared/data/facebook \\
        ../shared/data/coauthor-cs
    PYTHONPATH=build/python ~/.cache/bulkgnn-peers-venv/bin/python \\
        benchmarks/peers/saint_loaders.py train ../shared/data/facebook

Random walks of 2 steps from N/30 roots (PyG's Flickr example: 6,000 roots for 89,250
vertices), or N/10 vertices drawn for node draws, 10 subgraphs an epoch, the
normalisation from coverage 100 (PyG's examples); 2 threads for everyone.

  loader  the normalisation's presampling (each system's loader construction), then
          epochs of minibatches as a trainer consumes them (features touched), each
          system alternately in this process, the median epoch over --repetitions:
          bulkgnn (mb.to_pyg(): the subgraph trimmed to what its training vertices read,
          with edge_weight and node_norm), PyG's GraphSAINT samplers (the whole subgraph,
          with edge_norm and node_norm) with 0 and 2 workers, DGL's SAINTSampler (the
          subgraph, no normalisation: DGL leaves it to the user).
  train   the same PyG model (two GraphConv layers, hidden 128, dropout 0.5, Adam 0.01;
          training: the normalised sum aggregation and loss, as PyG's graph_saint example;
          evaluation: the mean over the whole graph) fed by bulkgnn's random-walk and node
          loaders and by PyG's, --seeds seeds, --epochs epochs; test accuracy at the epoch
          of the best validation accuracy.
"""

import time

import numpy as np
import torch

import bulkgnn
from alternating import (accuracy_cells, alternated_rows, consume_bulkgnn_as_pyg, consume_pyg,
                         fit_and_evaluate, loader_or_train_arguments, seeds_of, write_rows)
from cluster_loaders import edge_index_of, split_masks

WALK_LENGTH = 2
STEPS = 10
COVERAGE = 100
HIDDEN = 128
# Budgets as fractions of the graph's vertices.
ROOTS_PER_VERTEX = 1 / 30
NODES_PER_VERTEX = 1 / 10


def budget(ds, draw):
    return max(1, round(ds.num_nodes * (ROOTS_PER_VERTEX if draw == "rw" else NODES_PER_VERTEX)))


def bulkgnn_loader(ds, draw, seed):
    options = {"steps": STEPS, "coverage": COVERAGE}
    if draw == "rw":
        options["walk_length"] = WALK_LENGTH
    return bulkgnn.NeighborLoader(ds, input_nodes=np.asarray(ds.split()[0]),
                                  num_neighbors=[-1, -1], batch_size=budget(ds, draw),
                                  sampler=f"saint-{draw}", sampler_options=options, seed=seed,
                                  threads=2)


def pyg_data(ds):
    from torch_geometric.data import Data
    edge_index = edge_index_of(ds)
    masks = split_masks(ds)
    in_degree = torch.bincount(edge_index[1], minlength=ds.num_nodes).clamp(min=1).float()
    return Data(x=torch.from_numpy(np.asarray(ds.features)), edge_index=edge_index,
                y=torch.from_numpy(np.asarray(ds.labels)).long(), train_mask=masks[0],
                valid_mask=masks[1], test_mask=masks[2],
                edge_weight=1.0 / in_degree[edge_index[1]], num_nodes=ds.num_nodes)


def pyg_loader(data, ds, draw, workers):
    from torch_geometric.loader import GraphSAINTNodeSampler, GraphSAINTRandomWalkSampler
    common = {"num_steps": STEPS, "sample_coverage": COVERAGE, "save_dir": None, "log": False,
              "num_workers": workers, "persistent_workers": workers > 0}
    if draw == "rw":
        return GraphSAINTRandomWalkSampler(data, batch_size=budget(ds, draw),
                                           walk_length=WALK_LENGTH, **common)
    return GraphSAINTNodeSampler(data, batch_size=budget(ds, draw), **common)


def dgl_loader(ds, draw):
    import dgl
    edge_index = edge_index_of(ds)
    graph = dgl.graph((edge_index[0], edge_index[1]), num_nodes=ds.num_nodes)
    graph.ndata["feat"] = torch.from_numpy(np.asarray(ds.features))
    mode, size = ("walk", (budget(ds, draw), WALK_LENGTH)) if draw == "rw" else \
        ("node", budget(ds, draw))
    sampler = dgl.dataloading.SAINTSampler(mode=mode, budget=size, prefetch_ndata=["feat"])
    return dgl.dataloading.DataLoader(graph, torch.arange(STEPS), sampler, num_workers=0)


def consume_dgl(loader):
    edges = 0
    for subgraph in loader:
        float(subgraph.ndata["feat"][0, 0])
        edges += int(subgraph.num_edges())
    return edges


def timed(make):
    start = time.perf_counter()
    made = make()
    return made, time.perf_counter() - start


def measure_loaders(path, args):
    ds = bulkgnn.Dataset(path)
    data = pyg_data(ds)
    rows = []
    for draw in ("rw", "node"):
        made = {
            f"bulkgnn saint-{draw}": (lambda: bulkgnn_loader(ds, draw, 0), consume_bulkgnn_as_pyg),
            f"PyG GraphSAINT {draw}": (lambda: pyg_loader(data, ds, draw, 0), consume_pyg),
            f"PyG GraphSAINT {draw} 2 workers": (lambda: pyg_loader(data, ds, draw, 2),
                                                 consume_pyg),
            f"DGL SAINTSampler {draw}": (lambda: dgl_loader(ds, draw), consume_dgl),
        }
        systems, setup = {}, {}
        for name, (make, consume) in made.items():
            loader, setup[name] = timed(make)
            systems[name] = (loader, consume)
        rows += alternated_rows(ds.name, systems, args.repetitions, f"bulkgnn saint-{draw}",
                                setup)
    return rows


class Model(torch.nn.Module):
    def __init__(self, features, classes):
        super().__init__()
        from torch_geometric.nn import GraphConv
        self.convs = torch.nn.ModuleList([GraphConv(features, HIDDEN), GraphConv(HIDDEN, classes)])

    def forward(self, x, edge_index, edge_weight):
        x = torch.nn.functional.dropout(x, 0.5, self.training)
        x = self.convs[0](x, edge_index, edge_weight).relu()
        x = torch.nn.functional.dropout(x, 0.5, self.training)
        return self.convs[1](x, edge_index, edge_weight)


def train_one(ds, data, draw, seed, fed_by, epochs):
    torch.manual_seed(seed)
    if fed_by == "bulkgnn":
        loader = bulkgnn_loader(ds, draw, seed)

        def batches():
            for mb in loader:
                b = mb.to_pyg()
                rows = slice(0, b.batch_size)
                yield (b.x, b.edge_index, b.edge_weight), rows, b.y[rows], b.node_norm[rows]
    else:
        loader = pyg_loader(data, ds, draw, 0)

        def batches():
            # A subgraph without training vertices has no labels: skipped.
            for b in loader:
                yield ((b.x, b.edge_index, b.edge_norm * b.edge_weight), b.train_mask,
                       b.y[b.train_mask], b.node_norm[b.train_mask])

    model = Model(data.x.shape[1], ds.num_classes)
    masks = (data.train_mask, data.valid_mask, data.test_mask)
    return {"seed": seed, **fit_and_evaluate(model, batches,
                                             (data.x, data.edge_index, data.edge_weight),
                                             data.y, masks, epochs)}


def measure_training(path, args):
    ds = bulkgnn.Dataset(path)
    data = pyg_data(ds)
    rows = []
    for draw in ("rw", "node"):
        for fed_by in ("bulkgnn", "pyg"):
            runs = [train_one(ds, data, draw, seed, fed_by, args.epochs)
                    for seed in seeds_of(args)]
            print(f"| {ds.name} | {draw} | {fed_by} | {accuracy_cells(runs)}", flush=True)
            rows.append({"dataset": ds.name, "draw": draw, "fed_by": fed_by, "runs": runs})
    return rows


def main():
    args = loader_or_train_arguments(__doc__, epochs=30)
    if args.mode == "loader":
        print("| dataset | loader | setup s | s/epoch (median) | × bulkgnn | edges/epoch |")
        print("|---|---|---|---|---|---|")
        rows = [row for path in args.datasets for row in measure_loaders(path, args)]
    else:
        print("| dataset | draws | PyG model fed by | test accuracy | s/epoch |")
        print("|---|---|---|---|---|")
        rows = [row for path in args.datasets for row in measure_training(path, args)]
    write_rows(rows, args.json)


if __name__ == "__main__":
    main()
