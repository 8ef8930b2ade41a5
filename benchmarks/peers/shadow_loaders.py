"""ShaDow-GNN side by side: bulkgnn.NeighborLoader(sampler="shadow"), DGL's
ShaDowKHopSampler and PyG's ShaDowKHopSampler on the same data, seeds and fanouts.

Run with the peer environment (benchmarks/peers/setup_venv.sh) and bulkgnn's Python
package on the path:

    PYTHONPATH=build/python ~/.cache/bulkgnn-peers-venv/bin/python \\
        benchmarks/peers/shadow_loaders.py ../shared/data/facebook ../shared/data/coauthor-cs

Every training vertex of the dataset's split a seed, 512 per minibatch, shuffled, two hops
of 10 then 5 neighbours from the seeds, the subgraph's features touched; 2 threads, every
loader in the process (num_workers=0). bulkgnn and DGL induce one subgraph on the union of
the vertices a minibatch's seeds reach (bulkgnn's minibatch keeps what the seeds' two
layers read of it); PyG's ShaDowKHopSampler (depth 2, 10 neighbours at each hop: it takes
one count) gives each seed a subgraph of its own and batches them. The median epoch over
--repetitions, the systems alternating; vertices and edges per minibatch as each hands
them to a model.
"""

import numpy as np
import torch

import bulkgnn
from alternating import alternate, loader_arguments, write_rows
from cluster_loaders import edge_index_of, split_masks

BATCH = 512
FANOUTS = [10, 5]


def bulkgnn_loader(ds, train):
    return bulkgnn.NeighborLoader(ds, input_nodes=train, num_neighbors=FANOUTS, batch_size=BATCH,
                                  shuffle=True, sampler="shadow", threads=2)


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


def pyg_loader(ds, features):
    from torch_geometric.data import Data
    from torch_geometric.loader import ShaDowKHopSampler
    data = Data(x=features, edge_index=edge_index_of(ds), num_nodes=ds.num_nodes)
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


def measure(path, args):
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


def main():
    args = loader_arguments(__doc__)
    print("| dataset | loader | s/epoch (median) | × bulkgnn | vertices/minibatch "
          "| edges/minibatch |")
    print("|---|---|---|---|---|---|")
    rows = [row for path in args.datasets for row in measure(path, args)]
    write_rows(rows, args.json)


if __name__ == "__main__":
    main()
