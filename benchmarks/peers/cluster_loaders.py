"""Cluster-GCN side by side: bulkgnn.NeighborLoader(sampler="cluster-gcn"), PyG's
ClusterData + ClusterLoader and DGL's ClusterGCNSampler on the same data, clusters per
graph and clusters per minibatch.

Run with the peer environment (benchmarks/peers/setup_venv.sh) and bulkgnn's Python
package on the path:

    PYTHONPATH=build/python ~/.cache/bulkgnn-peers-venv/bin/python \\
        benchmarks/peers/cluster_loaders.py loader ../shared/data/facebook \\
        ../shared/data/coauthor-cs
    PYTHONPATH=build/python ~/.cache/bulkgnn-peers-venv/bin/python \\
        benchmarks/peers/cluster_loaders.py train ../shared/data/facebook

Every system cuts the graph into one METIS cluster per 150 vertices and takes 5 clusters
per minibatch, shuffled; 2 threads for everyone. bulkgnn runs METIS itself (seeded);
DGL's ClusterGCNSampler runs its own METIS (dgl.metis_partition_assignment); PyG's
ClusterData needs METIS from torch-sparse or pyg-lib, which the peer environment's
torch-sparse build lacks, so it is handed DGL's partition of the same graph (ClusterData's
own permutation and batching otherwise: the loader measured is PyG's).

  loader  epochs of minibatches as a trainer consumes them (features touched), each
          system alternately in this process, the median epoch over --repetitions:
          bulkgnn (mb.to_pyg(): the minibatch keeps what its training vertices read),
          PyG's ClusterLoader (every vertex and edge of the batch's clusters) with 0 and
          2 workers, DGL's DataLoader over ClusterGCNSampler (the induced subgraph of the
          clusters, features prefetched).
  train   the same PyG model (two SAGEConv mean layers, hidden 128, dropout 0.5, Adam
          0.01, cross-entropy over the batch's training vertices) fed by bulkgnn's loader
          and by PyG's ClusterLoader, --seeds seeds, --epochs epochs; test accuracy over
          the whole graph at the epoch of the best validation accuracy.
"""

import os
import tempfile

import numpy as np
import torch

import bulkgnn
from alternating import (accuracy_cells, alternated_rows, consume_bulkgnn_as_pyg, consume_pyg,
                         fit_and_evaluate, loader_or_train_arguments, seeds_of, write_rows)

VERTICES_PER_CLUSTER = 150
CLUSTERS_PER_BATCH = 5
HIDDEN = 128


def edge_index_of(ds):
    """The graph as PyG's edge_index: row i of the CSR holds i's in-neighbours, so
    edge_index = (neighbour, i)."""
    indptr, indices = np.asarray(ds.indptr), np.asarray(ds.indices)
    targets = np.repeat(np.arange(ds.num_nodes, dtype=np.int64), np.diff(indptr))
    return torch.from_numpy(np.stack([indices.astype(np.int64), targets]))


def clusters_of(ds):
    return -(-ds.num_nodes // VERTICES_PER_CLUSTER)


def split_masks(ds):
    masks = []
    for part in ds.split():
        mask = torch.zeros(ds.num_nodes, dtype=torch.bool)
        mask[torch.from_numpy(np.asarray(part, dtype=np.int64))] = True
        masks.append(mask)
    return masks


def bulkgnn_loader(ds, seed):
    train = np.asarray(ds.split()[0])
    return bulkgnn.NeighborLoader(ds, input_nodes=train, num_neighbors=[-1, -1],
                                  batch_size=CLUSTERS_PER_BATCH, sampler="cluster-gcn",
                                  sampler_options={"clusters": clusters_of(ds)}, seed=seed,
                                  threads=2)


def dgl_partition(ds, edge_index):
    import dgl
    graph = dgl.graph((edge_index[0], edge_index[1]), num_nodes=ds.num_nodes)
    return dgl.metis_partition_assignment(dgl.to_bidirected(graph), clusters_of(ds))


def pyg_cluster_data(ds, edge_index, masks, workdir):
    """ClusterData over DGL's METIS partition (its _metis is the only step replaced)."""
    from torch_geometric.data import Data
    from torch_geometric.loader import ClusterData
    data = Data(x=torch.from_numpy(np.asarray(ds.features)), edge_index=edge_index,
                y=torch.from_numpy(np.asarray(ds.labels)).long(), train_mask=masks[0],
                num_nodes=ds.num_nodes)
    partition = dgl_partition(ds, edge_index)
    original = ClusterData._metis
    ClusterData._metis = lambda self, edge_index, num_nodes: partition
    try:
        return ClusterData(data, num_parts=clusters_of(ds), save_dir=None, log=False)
    finally:
        ClusterData._metis = original


def pyg_loader(cluster_data, workers):
    from torch_geometric.loader import ClusterLoader
    return ClusterLoader(cluster_data, batch_size=CLUSTERS_PER_BATCH, shuffle=True,
                         num_workers=workers, persistent_workers=workers > 0)


def dgl_loader(ds, edge_index, workdir):
    import dgl
    graph = dgl.graph((edge_index[0], edge_index[1]), num_nodes=ds.num_nodes)
    graph.ndata["feat"] = torch.from_numpy(np.asarray(ds.features))
    # ClusterGCNSampler caches its partition in cache_path and reads it back if
    # the file exists: one file per dataset.
    sampler = dgl.dataloading.ClusterGCNSampler(
        graph, clusters_of(ds), cache_path=os.path.join(workdir, f"dgl-{ds.name}.pkl"),
        prefetch_ndata=["feat"])
    return dgl.dataloading.DataLoader(graph, torch.arange(clusters_of(ds)), sampler,
                                      batch_size=CLUSTERS_PER_BATCH, shuffle=True,
                                      drop_last=False, num_workers=0)


def consume_dgl(loader):
    edges = 0
    for subgraph in loader:
        float(subgraph.ndata["feat"][0, 0])
        edges += int(subgraph.num_edges())
    return edges


def measure_loaders(path, args, workdir):
    ds = bulkgnn.Dataset(path)
    edge_index = edge_index_of(ds)
    masks = split_masks(ds)
    cluster_data = pyg_cluster_data(ds, edge_index, masks, workdir)
    systems = {
        "bulkgnn cluster-gcn": (bulkgnn_loader(ds, 0), consume_bulkgnn_as_pyg),
        "PyG ClusterLoader": (pyg_loader(cluster_data, 0), consume_pyg),
        "PyG ClusterLoader 2 workers": (pyg_loader(cluster_data, 2), consume_pyg),
        "DGL ClusterGCNSampler": (dgl_loader(ds, edge_index, workdir), consume_dgl),
    }
    return alternated_rows(ds.name, systems, args.repetitions, "bulkgnn cluster-gcn")


class Model(torch.nn.Module):
    def __init__(self, features, classes):
        super().__init__()
        from torch_geometric.nn import SAGEConv
        self.convs = torch.nn.ModuleList([SAGEConv(features, HIDDEN), SAGEConv(HIDDEN, classes)])

    def forward(self, x, edge_index):
        x = torch.nn.functional.dropout(x, 0.5, self.training)
        x = self.convs[0](x, edge_index).relu()
        x = torch.nn.functional.dropout(x, 0.5, self.training)
        return self.convs[1](x, edge_index)


def train_one(ds, seed, fed_by, epochs, cluster_data):
    torch.manual_seed(seed)
    edge_index = edge_index_of(ds)
    x = torch.from_numpy(np.asarray(ds.features))
    y = torch.from_numpy(np.asarray(ds.labels)).long()
    if fed_by == "bulkgnn":
        loader = bulkgnn_loader(ds, seed)

        def batches():
            for mb in loader:
                batch = mb.to_pyg()
                rows = slice(0, batch.batch_size)
                yield (batch.x, batch.edge_index), rows, batch.y[rows], None
    else:
        loader = pyg_loader(cluster_data, 0)

        def batches():
            # A batch of clusters without training vertices has no labels: skipped.
            for batch in loader:
                yield (batch.x, batch.edge_index), batch.train_mask, \
                    batch.y[batch.train_mask], None

    model = Model(x.shape[1], ds.num_classes)
    return {"seed": seed, **fit_and_evaluate(model, batches, (x, edge_index), y,
                                             split_masks(ds), epochs)}


def measure_training(path, args, workdir):
    ds = bulkgnn.Dataset(path)
    cluster_data = pyg_cluster_data(ds, edge_index_of(ds), split_masks(ds), workdir)
    rows = []
    for fed_by in ("bulkgnn", "pyg"):
        runs = [train_one(ds, seed, fed_by, args.epochs, cluster_data)
                for seed in seeds_of(args)]
        print(f"| {ds.name} | {fed_by} | {accuracy_cells(runs)}", flush=True)
        rows.append({"dataset": ds.name, "fed_by": fed_by, "runs": runs})
    return rows


def main():
    args = loader_or_train_arguments(__doc__, epochs=30)
    with tempfile.TemporaryDirectory() as workdir:
        if args.mode == "loader":
            print("| dataset | loader | s/epoch (median) | × bulkgnn | edges/epoch |")
            print("|---|---|---|---|---|")
            rows = [row for path in args.datasets for row in measure_loaders(path, args, workdir)]
        else:
            print("| dataset | PyG model fed by | test accuracy | s/epoch |")
            print("|---|---|---|---|")
            rows = [row for path in args.datasets
                    for row in measure_training(path, args, workdir)]
    write_rows(rows, args.json)


if __name__ == "__main__":
    main()
