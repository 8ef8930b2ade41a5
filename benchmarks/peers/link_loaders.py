"""Link prediction side by side: bulkgnn.LinkNeighborLoader, PyG's LinkNeighborLoader and
DGL's edge-prediction DataLoader on the same split, negatives protocol and fanouts.

Run with the peer environment (benchmarks/peers/setup_venv.sh) and bulkgnn's Python
package on the path:

    PYTHONPATH=build/python ~/.cache/bulkgnn-peers-venv/bin/python \\
        benchmarks/peers/link_loaders.py loader ../shared/data/facebook ../shared/data/coauthor-cs
    PYTHONPATH=build/python ~/.cache/bulkgnn-peers-venv/bin/python \\
        benchmarks/peers/link_loaders.py train ../shared/data/cora ../shared/data/facebook

The split is bulkgnn.random_link_split (PyG's RandomLinkSplit semantics, 70/10/20, seeded);
every system passes messages over the same training graph (both directions of each
training edge) and takes the training edges, one direction each, as positives, 512 per
minibatch with as many uniform negatives, fanouts 10,10, shuffled; 2 threads for everyone.

  loader  epochs of minibatches as a trainer consumes them (features touched), each
          system alternately in this process, the median epoch over --repetitions: bulkgnn
          leaving each minibatch's positives out of its blocks in both directions
          (exclude="reverse") and not at all (exclude="none"); PyG's LinkNeighborLoader
          (which leaves nothing out) with 0 and 2 workers; DGL's DataLoader over
          as_edge_prediction_sampler with exclude="reverse_id".
  train   the same PyG model (two SAGEConv mean layers, hidden 128, dot-product scores,
          binary cross-entropy, Adam 0.01) fed by bulkgnn.LinkNeighborLoader (mb.to_pyg())
          and by PyG's LinkNeighborLoader, --seeds seeds, each its own split; test Hits@50
          against the split's fixed negatives and MRR against 100 corrupted tails of each
          positive (bulkgnn.hits_at_k and mean_reciprocal_rank, OGB's definitions), at the
          epoch of the best valid Hits@50. A dataset without node features (soc-slashdot0902)
          trains a torch.nn.Embedding of EMBEDDING columns as the input, rows read by each
          batch's n_id, as `bulkgnn train --node-embedding` does.
"""

import statistics
import time

import numpy as np
import torch

import bulkgnn
from alternating import (alternate, consume_bulkgnn_as_pyg, consume_pyg, loader_or_train_arguments,
                         seeds_of, write_rows)

FANOUTS = [10, 10]
BATCH = 512
EMBEDDING = 64  # input width learnt for a dataset without features


def edge_index_of(csr, num_nodes):
    """An in-neighbour CSR (row v lists v's sources) as PyG's edge_index."""
    indptr, indices = (np.asarray(a) for a in csr)
    targets = np.repeat(np.arange(num_nodes, dtype=np.int64), np.diff(indptr))
    return np.stack([np.asarray(indices, dtype=np.int64), targets])


def split_of(ds, seed):
    """The split and the training graph as edge_index (both directions of an undirected
    graph's edges), PyG's layout."""
    split = bulkgnn.random_link_split(ds, seed=seed)
    indptr, indices = (np.asarray(a) for a in split["train_graph"])
    return split, (indptr, indices), edge_index_of(split["train_graph"], ds.num_nodes)


def bulkgnn_loader(ds, train_csr, train_edges, seed, exclude):
    train_ds = bulkgnn.Dataset.from_arrays(indptr=train_csr[0], indices=train_csr[1],
                                           num_nodes=ds.num_nodes, features=ds.features)
    return bulkgnn.LinkNeighborLoader(train_ds, num_neighbors=FANOUTS,
                                      edge_label_index=train_edges, neg_sampling_ratio=1.0,
                                      batch_size=BATCH, shuffle=True, exclude=exclude,
                                      seed=seed, threads=2)


def pyg_loader(ds, graph, train_edges, workers):
    from torch_geometric.data import Data
    from torch_geometric.loader import LinkNeighborLoader
    x = None if ds.features is None else torch.from_numpy(np.asarray(ds.features))
    data = Data(x=x, edge_index=torch.from_numpy(graph), num_nodes=ds.num_nodes)
    return LinkNeighborLoader(data, num_neighbors=FANOUTS,
                              edge_label_index=torch.from_numpy(train_edges.astype(np.int64)),
                              neg_sampling_ratio=1.0, batch_size=BATCH, shuffle=True,
                              num_workers=workers, persistent_workers=workers > 0)


def dgl_loader(ds, train_edges):
    """DGL's graph holds each training edge u→v as id i and v→u as id i + E, so the
    positives are ids [0, E) and their reverses are reverse_eids."""
    import dgl
    count = train_edges.shape[1]
    source = np.concatenate([train_edges[0], train_edges[1]])
    target = np.concatenate([train_edges[1], train_edges[0]])
    graph = dgl.graph((torch.from_numpy(source), torch.from_numpy(target)),
                      num_nodes=ds.num_nodes)
    graph.ndata["feat"] = torch.from_numpy(np.asarray(ds.features))
    reverse = torch.cat([torch.arange(count) + count, torch.arange(count)])
    sampler = dgl.dataloading.as_edge_prediction_sampler(
        dgl.dataloading.NeighborSampler(FANOUTS, prefetch_node_feats=["feat"]),
        exclude="reverse_id", reverse_eids=reverse,
        negative_sampler=dgl.dataloading.negative_sampler.Uniform(1))
    return dgl.dataloading.DataLoader(graph, torch.arange(count), sampler, batch_size=BATCH,
                                      shuffle=True, drop_last=False, num_workers=0)


def consume_dgl(loader):
    edges = 0
    for _, _, _, blocks in loader:
        float(blocks[0].srcdata["feat"][0, 0])
        edges += sum(int(b.num_edges()) for b in blocks)
    return edges


def measure_loaders(path, args):
    ds = bulkgnn.Dataset(path)
    split, train_csr, graph = split_of(ds, 0)
    train_edges = np.asarray(split["train"])
    systems = {
        "bulkgnn exclude=reverse": (bulkgnn_loader(ds, train_csr, train_edges, 0, "reverse"),
                                    consume_bulkgnn_as_pyg),
        "bulkgnn exclude=none": (bulkgnn_loader(ds, train_csr, train_edges, 0, "none"),
                                 consume_bulkgnn_as_pyg),
        "PyG LinkNeighborLoader": (pyg_loader(ds, graph, train_edges, 0), consume_pyg),
        "PyG LinkNeighborLoader 2 workers": (pyg_loader(ds, graph, train_edges, 2), consume_pyg),
        "DGL exclude=reverse_id": (dgl_loader(ds, train_edges), consume_dgl),
    }
    seconds, edges, medians = alternate(systems, args.repetitions)
    rows = []
    base = medians["bulkgnn exclude=reverse"]
    for name in systems:
        median = medians[name]
        rows.append({"dataset": ds.name, "system": name, "seconds_per_epoch": median,
                     "sampled_edges_per_epoch": edges[name],
                     "times_bulkgnn_reverse": median / base, "all_seconds": seconds[name]})
        print(f"| {ds.name} | {name} | {median:.3f} | {median / base:.1f}x | "
              f"{edges[name]:,} |", flush=True)
    return rows


class Model(torch.nn.Module):
    """Two SAGEConv layers over the features, or over a learnt embedding per vertex
    (num_nodes given) read by node ids."""

    def __init__(self, features, hidden=128, num_nodes=None):
        super().__init__()
        from torch_geometric.nn import SAGEConv
        self.embedding = None if num_nodes is None else torch.nn.Embedding(num_nodes, features)
        self.convs = torch.nn.ModuleList([SAGEConv(features, hidden), SAGEConv(hidden, hidden)])

    def inputs(self, x, n_id=None):
        if self.embedding is None:
            return x
        return self.embedding.weight if n_id is None else self.embedding(n_id)

    def forward(self, x, edge_index):
        x = self.convs[0](x, edge_index).relu()
        return self.convs[1](x, edge_index)


def scores(z, pairs, chunk=1 << 20):
    """Dot products of the pairs' rows, a million pairs at a time (soc-slashdot's 87,000
    held-out positives with 100 tails each would gather 9 GB of rows at once)."""
    if pairs.shape[1] == 0:
        return z.new_zeros(0)
    return torch.cat([(z[pairs[0, i:i + chunk]] * z[pairs[1, i:i + chunk]]).sum(-1)
                      for i in range(0, pairs.shape[1], chunk)])


def ranking_tails(ds, positives, seed, count=100):
    """Each positive's `count` uniform corrupted tails (its source kept), none an edge of
    the whole graph and no loop, redrawn until they are."""
    rng = np.random.default_rng(seed)
    n = ds.num_nodes
    indptr, indices = np.asarray(ds.indptr), np.asarray(ds.indices)
    keys = np.sort(np.repeat(np.arange(n, dtype=np.int64), np.diff(indptr)) * n + indices)
    sources = positives[0][:, None]
    tails = rng.integers(n, size=(positives.shape[1], count))
    while True:
        bad = (tails == sources) | np.isin(tails * n + sources, keys)
        if not bad.any():
            return tails
        tails[bad] = rng.integers(n, size=int(bad.sum()))


@torch.no_grad()
def evaluate(model, x, graph, positives, negatives, tails):
    model.eval()
    z = model(model.inputs(x), graph)
    model.train()
    pos = scores(z, torch.from_numpy(positives)).numpy()
    neg = scores(z, torch.from_numpy(negatives)).numpy()
    sources = np.repeat(positives[0], tails.shape[1])
    ranked = scores(z, torch.from_numpy(np.stack([sources, tails.reshape(-1)]))).numpy()
    return (bulkgnn.hits_at_k(pos, neg, 50),
            bulkgnn.mean_reciprocal_rank(pos, ranked.reshape(tails.shape)))


def train_one(ds, seed, fed_by, epochs):
    torch.manual_seed(seed)
    split, train_csr, graph = split_of(ds, seed)
    train_edges = np.asarray(split["train"])
    valid, test = np.asarray(split["valid"]), np.asarray(split["test"])
    test_graph = edge_index_of(split["test_graph"], ds.num_nodes)  # training and valid edges
    x = None if ds.features is None else torch.from_numpy(np.asarray(ds.features))
    graph_t, test_graph_t = torch.from_numpy(graph), torch.from_numpy(test_graph)
    valid_tails = ranking_tails(ds, valid, seed)
    test_tails = ranking_tails(ds, test, seed + 1000)
    if fed_by == "bulkgnn":
        loader = bulkgnn_loader(ds, train_csr, train_edges, seed, "none")
        batches = lambda: (mb.to_pyg() for mb in loader)  # noqa: E731
    else:
        loader = pyg_loader(ds, graph, train_edges, 0)
        batches = lambda: iter(loader)  # noqa: E731
    model = (Model(EMBEDDING, num_nodes=ds.num_nodes) if x is None
             else Model(ds.features.shape[1]))
    optimizer = torch.optim.Adam(model.parameters(), lr=0.01)
    best = (-1.0, 0.0, 0.0)
    seconds = []
    for _ in range(epochs):
        start = time.perf_counter()
        for batch in batches():
            optimizer.zero_grad()
            z = model(model.inputs(batch.x, batch.n_id), batch.edge_index)
            loss = torch.nn.functional.binary_cross_entropy_with_logits(
                scores(z, batch.edge_label_index), batch.edge_label)
            loss.backward()
            optimizer.step()
        seconds.append(time.perf_counter() - start)
        valid_hits, _ = evaluate(model, x, graph_t, valid, np.asarray(split["valid_negatives"]),
                                 valid_tails)
        if valid_hits > best[0]:
            test_hits, test_mrr = evaluate(model, x, test_graph_t, test,
                                           np.asarray(split["test_negatives"]), test_tails)
            best = (valid_hits, test_hits, test_mrr)
    return {"seed": seed, "test_hits@50": best[1], "test_mrr": best[2],
            "seconds_per_epoch": statistics.median(seconds)}


def measure_training(path, args):
    ds = bulkgnn.Dataset(path)
    rows = []
    for fed_by in ("bulkgnn", "pyg"):
        runs = [train_one(ds, seed, fed_by, args.epochs) for seed in seeds_of(args)]
        hits = [r["test_hits@50"] for r in runs]
        mrr = [r["test_mrr"] for r in runs]
        seconds = statistics.median(r["seconds_per_epoch"] for r in runs)
        print(f"| {ds.name} | {fed_by} | {statistics.mean(hits):.3f} ± "
              f"{statistics.stdev(hits) if len(hits) > 1 else 0:.3f} | "
              f"{statistics.mean(mrr):.3f} ± {statistics.stdev(mrr) if len(mrr) > 1 else 0:.3f}"
              f" | {seconds:.2f} |", flush=True)
        rows.append({"dataset": ds.name, "fed_by": fed_by, "runs": runs})
    return rows


def main():
    args = loader_or_train_arguments(__doc__, epochs=10)
    if args.mode == "loader":
        print("| dataset | loader | s/epoch (median) | × bulkgnn reverse | sampled edges/epoch |")
        print("|---|---|---|---|---|")
        rows = [row for path in args.datasets for row in measure_loaders(path, args)]
    else:
        print("| dataset | PyG model fed by | test Hits@50 | test MRR (100 tails) | s/epoch |")
        print("|---|---|---|---|---|")
        rows = [row for path in args.datasets for row in measure_training(path, args)]
    write_rows(rows, args.json)


if __name__ == "__main__":
    main()
