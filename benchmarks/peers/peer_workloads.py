"""One measurement of one peer system on one workload, printed as JSON.

Runs inside the peer environment (benchmarks/peers/setup_venv.sh) and is started once per
measurement by run_peers.py, so every measurement gets a fresh process, as bulkgnn's own
commands do. Imports, reading the dataset and building the graph/loader objects are not
timed; the timed part is iterating minibatches (sample, loader; after one untimed warm-up
epoch) or training epochs (train; the report leaves out each run's first epoch).

Systems:
  pyg         PyTorch Geometric: NeighborLoader (sampler backend detected and reported),
              GraphSAGE from SAGEConv (mean aggregation, root weight), each layer
              trimmed to the rows it needs (trim_to_layer; the per-hop counts that
              torch-sparse does not return are recovered from the batch's layout).
  dgl         DGL: dgl.dataloading.DataLoader with NeighborSampler, GraphSAGE from
              dgl.nn.SAGEConv('mean') over the sampled blocks.
  bulkgnn-py  bulkgnn.NeighborLoader in the Python loop, every minibatch turned into
              PyG's layout by mb.to_pyg(); trains the same PyG model as `pyg`.
  bulkgnn-py-dgl
              bulkgnn.NeighborLoader with mb.to_dgl(); trains the same DGL model as `dgl`
              (train workload only).
  ladies-ref  A numpy/scipy port of LADIES (Zou et al., 2019) with bulkgnn's definition,
              since neither PyG nor DGL ships a LADIES sampler.
--workers N gives PyG's and DGL's loaders N worker processes (persistent across epochs);
bulkgnn's loader runs its own pipeline threads (--bulk minibatches per sampler call).

Data is bulkgnn's native layout (indptr/indices .npy, row v = in-neighbours of v), read
identically by every system: an edge u -> v for each u in row v.

Example:
  python peer_workloads.py --system pyg --workload loader --data DIR --fanouts 15,10,5
"""

import argparse
import json
import os
import sys
import time
from pathlib import Path

import numpy as np


def load_native(directory, split_name, need_features):
    """Reads a bulkgnn native dataset: CSR, features, labels and one split."""
    directory = Path(directory)
    manifest = json.loads((directory / "manifest.json").read_text())
    data = {
        "num_nodes": int(manifest["num_nodes"]),
        "num_classes": int(manifest.get("num_classes", 0)),
        "indptr": np.load(directory / "indptr.npy"),
        "indices": np.load(directory / "indices.npy"),
    }
    if need_features:
        data["features"] = np.load(directory / "features.npy")
    labels_file = directory / "labels.npy"
    data["labels"] = np.load(labels_file) if labels_file.exists() else None
    splits = manifest.get("splits", [])
    if splits:
        name = split_name or splits[0]
        data["split"] = {part: np.load(directory / "split" / name / f"{part}.npy").astype(np.int64)
                         for part in ("train", "valid", "test")}
        data["seeds"] = data["split"]["train"]
    else:
        data["split"] = None
        data["seeds"] = np.arange(data["num_nodes"], dtype=np.int64)
    return data


def edge_index_of(data):
    """(src, dst) of every edge, in CSR order (sorted by destination)."""
    degrees = np.diff(data["indptr"])
    dst = np.repeat(np.arange(data["num_nodes"], dtype=np.int64), degrees)
    src = data["indices"].astype(np.int64)
    return src, dst


def pyg_sampler_backend():
    import torch_geometric.typing as t
    if t.WITH_PYG_LIB:
        return "pyg-lib"
    if t.WITH_TORCH_SPARSE:
        return "torch-sparse"
    return "none"


# ----------------------------------------------------------------------------- PyG

def pyg_graph(data, with_features):
    import torch
    from torch_geometric.data import Data
    src, dst = edge_index_of(data)
    graph = Data(edge_index=torch.from_numpy(np.stack([src, dst])), num_nodes=data["num_nodes"])
    if with_features:
        graph.x = torch.from_numpy(data["features"])
        if data["labels"] is not None:
            graph.y = torch.from_numpy(data["labels"].astype(np.int64))
    return graph


def pyg_loader(data, args, with_features, shuffle=True):
    import torch
    from torch_geometric.loader import NeighborLoader
    graph = pyg_graph(data, with_features)
    # is_sorted: edges are already sorted by destination (CSC order), as PyG wants them.
    return graph, NeighborLoader(graph, num_neighbors=args.fanouts, batch_size=args.batch_size,
                                 input_nodes=torch.from_numpy(data["seeds"]), shuffle=shuffle,
                                 replace=False, is_sorted=True, num_workers=args.workers,
                                 persistent_workers=args.workers > 0)


def warm_up(loader, args):
    """One untimed epoch (at most --max-minibatches) before the timed ones, for every
    Python loader alike: worker processes (persistent) are started, lazy imports and
    caches are done, so the rate is the steady state each loader reaches."""
    for i, _ in enumerate(loader):
        if args.max_minibatches and i + 1 >= args.max_minibatches:
            break


def pyg_iterate(loader, args, with_features, batch_of=lambda batch: batch):
    """Iterates epochs of the loader; counts what a trainer would receive: each item in
    PyG's layout (batch_of turns a bulkgnn minibatch into it with mb.to_pyg())."""
    counts = {"minibatches": 0, "sampled_edges": 0, "input_nodes": 0, "feature_bytes": 0}
    warm_up(loader, args)
    start = time.perf_counter()
    for _ in range(args.epochs):
        for i, item in enumerate(loader):
            if args.max_minibatches and i >= args.max_minibatches:
                break
            batch = batch_of(item)
            counts["minibatches"] += 1
            counts["sampled_edges"] += int(batch.edge_index.size(1))
            counts["input_nodes"] += int(batch.num_nodes)
            if with_features:
                counts["feature_bytes"] += batch.x.numel() * batch.x.element_size()
    counts["seconds"] = time.perf_counter() - start
    return counts


def torch_sparse_hop_counts(batch, layers):
    """(num_sampled_nodes, num_sampled_edges) of a NeighborLoader batch that PyG sampled
    with torch-sparse, which leaves them None (only pyg-lib, not on PyPI, returns them),
    so that PyG's model can trim its layers as PyG documents.

    torch-sparse numbers nodes as it discovers them (seeds first) and emits edges hop by
    hop, so hop h's edges are the next run of edges whose targets are hop h's nodes, and
    the sources beyond those nodes are what hop h adds. Raises if the batch is not laid
    out so (check_adapters.py checks that trimming with these counts leaves the seeds'
    outputs unchanged)."""
    import torch
    source, target = batch.edge_index
    nodes, edges = [batch.batch_size], []
    first_node, end_node, first_edge = 0, batch.batch_size, 0
    for _ in range(layers):
        in_hop = (target[first_edge:] >= first_node) & (target[first_edge:] < end_node)
        count = int(in_hop.numel() if bool(in_hop.all()) else torch.argmin(in_hop.int()))
        hop_sources = source[first_edge:first_edge + count]
        new_end = max(end_node, int(hop_sources.max()) + 1 if count else 0)
        edges.append(count)
        nodes.append(new_end - end_node)
        first_node, end_node, first_edge = end_node, new_end, first_edge + count
    if first_edge != source.numel() or end_node != batch.num_nodes:
        raise RuntimeError(f"batch is not laid out hop by hop: {first_edge} of "
                           f"{source.numel()} edges and {end_node} of {batch.num_nodes} nodes "
                           "accounted for")
    return nodes, edges


def pyg_hop_counts(batch, layers):
    """The batch's per-hop counts: PyG's own, or reconstructed for torch-sparse."""
    nodes = getattr(batch, "num_sampled_nodes", None)
    edges = getattr(batch, "num_sampled_edges", None)
    if nodes is not None and edges is not None:
        return nodes, edges
    return torch_sparse_hop_counts(batch, layers)


class PygSage:
    """PyG GraphSAGE: SAGEConv (mean, root weight), ReLU and dropout between layers.

    Given the batch's per-hop counts (num_sampled_nodes, num_sampled_edges), layer i
    first drops the nodes and edges of the outermost i hops with trim_to_layer, as PyG
    documents for NeighborLoader, so that each layer computes only the rows the next
    one reads; without them (full-graph evaluation) every layer runs on every node."""

    def __new__(cls, in_channels, hidden, out_channels, layers, dropout):
        import torch
        import torch.nn.functional as F
        from torch_geometric.nn import SAGEConv

        class Sage(torch.nn.Module):
            def __init__(self):
                super().__init__()
                widths = [in_channels] + [hidden] * (layers - 1) + [out_channels]
                self.convs = torch.nn.ModuleList(
                    SAGEConv(widths[i], widths[i + 1], aggr="mean") for i in range(layers))

            def forward(self, x, edge_index, num_sampled_nodes=None, num_sampled_edges=None):
                from torch_geometric.utils import trim_to_layer
                for i, conv in enumerate(self.convs):
                    if num_sampled_nodes is not None and num_sampled_edges is not None:
                        x, edge_index, _ = trim_to_layer(
                            layer=i, num_sampled_nodes_per_hop=num_sampled_nodes,
                            num_sampled_edges_per_hop=num_sampled_edges, x=x,
                            edge_index=edge_index)
                    x = conv(x, edge_index)
                    if i + 1 < len(self.convs):
                        x = F.dropout(F.relu(x), p=dropout, training=self.training)
                return x

        return Sage()


def pyg_batches(data, args):
    """(graph, loader, batch_of): PyG's NeighborLoader, or bulkgnn's (bulkgnn-py)
    with each minibatch turned into PyG's layout by mb.to_pyg()."""
    if args.system == "bulkgnn-py":
        graph = pyg_graph(data, True)
        return graph, bulkgnn_loader(data, args, pyg_data=graph), lambda mb: mb.to_pyg()
    graph, loader = pyg_loader(data, args, with_features=True)
    return graph, loader, lambda batch: batch


def pyg_train(data, args):
    import torch
    import torch.nn.functional as F
    graph, loader, batch_of = pyg_batches(data, args)
    device = torch.device(args.device)
    model = PygSage(data["features"].shape[1], args.hidden, data["num_classes"],
                    len(args.fanouts), args.dropout).to(device)
    optimizer = torch.optim.Adam(model.parameters(), lr=args.lr, weight_decay=args.weight_decay)

    def train_epoch():
        model.train()
        total_loss, steps = 0.0, 0
        for i, item in enumerate(loader):
            if args.max_minibatches and i >= args.max_minibatches:
                break
            batch = batch_of(item)
            hops = pyg_hop_counts(batch, len(args.fanouts))
            batch = batch.to(device, non_blocking=True)
            optimizer.zero_grad()
            out = model(batch.x, batch.edge_index, *hops)[:batch.batch_size]
            loss = F.cross_entropy(out, batch.y[:batch.batch_size])
            loss.backward()
            optimizer.step()
            total_loss += float(loss)
            steps += 1
        return total_loss / max(steps, 1)

    @torch.no_grad()
    def evaluate():
        model.eval()
        return model(graph.x.to(device), graph.edge_index.to(device)).argmax(dim=1).cpu().numpy()

    return run_training(train_epoch, evaluate, data, args)


# ----------------------------------------------------------------------------- bulkgnn

def bulkgnn_loader(data, args, shuffle=True, pyg_data=None):
    """bulkgnn.NeighborLoader over the same native dataset and seeds (the build's
    python/ folder must be on PYTHONPATH; run_peers.py puts it there). With
    --from-memory, over what this process already holds, as a PyG or DGL user's script
    hands it over: the PyG Data given (pyg_data; bulkgnn builds its CSR from the
    edge_index and views the features), else the CSR arrays read (viewed)."""
    import bulkgnn
    if not args.from_memory:
        dataset = bulkgnn.Dataset(args.data)
    elif pyg_data is not None:
        dataset = bulkgnn.Dataset.from_pyg(pyg_data)
    else:
        dataset = bulkgnn.Dataset.from_arrays(
            indptr=data["indptr"], indices=data["indices"], features=data["features"],
            labels=data["labels"], num_classes=data["num_classes"] or None)
    return bulkgnn.NeighborLoader(dataset, data["seeds"], fanouts=args.fanouts,
                                  batch_size=args.batch_size, shuffle=shuffle, seed=args.seed,
                                  bulk=args.bulk, prefetch=args.prefetch, threads=args.threads,
                                  device=args.loader_device)


# ----------------------------------------------------------------------------- DGL

def dgl_graph(data, with_features):
    import dgl
    import torch
    # Row v of bulkgnn's CSR holds v's in-neighbours: exactly DGL's CSC (column = dst).
    graph = dgl.graph(("csc", (torch.from_numpy(data["indptr"].astype(np.int64)),
                               torch.from_numpy(data["indices"].astype(np.int64)),
                               torch.tensor([], dtype=torch.int64))),
                      num_nodes=data["num_nodes"])
    graph = graph.formats("csc")
    if with_features:
        graph.ndata["feat"] = torch.from_numpy(data["features"])
        if data["labels"] is not None:
            graph.ndata["label"] = torch.from_numpy(data["labels"].astype(np.int64))
    return graph


def dgl_loader(graph, data, args, with_features, shuffle=True):
    import dgl
    import torch
    # DGL's fanouts[i] belongs to layer i counted from the input, so hop 0 (the seeds) is
    # the last entry: reverse bulkgnn/PyG's order.
    fanouts = list(reversed(args.fanouts))
    if with_features:
        sampler = dgl.dataloading.NeighborSampler(
            fanouts, prefetch_node_feats=["feat"],
            prefetch_labels=["label"] if "label" in graph.ndata else None)
    else:
        sampler = dgl.dataloading.NeighborSampler(fanouts)
    return dgl.dataloading.DataLoader(graph, torch.from_numpy(data["seeds"]), sampler,
                                      batch_size=args.batch_size, shuffle=shuffle,
                                      drop_last=False, num_workers=args.workers,
                                      persistent_workers=args.workers > 0)


def dgl_iterate(loader, args, with_features):
    counts = {"minibatches": 0, "sampled_edges": 0, "input_nodes": 0, "feature_bytes": 0}
    warm_up(loader, args)
    start = time.perf_counter()
    for _ in range(args.epochs):
        for i, (input_nodes, _, blocks) in enumerate(loader):
            if args.max_minibatches and i >= args.max_minibatches:
                break
            counts["minibatches"] += 1
            counts["sampled_edges"] += sum(int(b.num_edges()) for b in blocks)
            counts["input_nodes"] += int(input_nodes.numel())
            if with_features:
                feat = blocks[0].srcdata["feat"]
                counts["feature_bytes"] += feat.numel() * feat.element_size()
    counts["seconds"] = time.perf_counter() - start
    return counts


class BulkgnnDglEpochs:
    """bulkgnn's loader as DGL's DataLoader is iterated: each iteration is one epoch of
    (input_nodes, output_nodes, blocks) from mb.to_dgl()."""

    def __init__(self, loader):
        self.loader = loader

    def __iter__(self):
        return (mb.to_dgl() for mb in self.loader)


def dgl_train(data, args):
    import dgl.nn
    import torch
    import torch.nn.functional as F
    graph = dgl_graph(data, with_features=True)
    if args.system == "bulkgnn-py-dgl":
        loader = BulkgnnDglEpochs(bulkgnn_loader(data, args))
    else:
        loader = dgl_loader(graph, data, args, with_features=True)
    widths = [data["features"].shape[1]] + [args.hidden] * (len(args.fanouts) - 1) + \
        [data["num_classes"]]
    convs = torch.nn.ModuleList(dgl.nn.SAGEConv(widths[i], widths[i + 1], "mean")
                                for i in range(len(args.fanouts)))
    optimizer = torch.optim.Adam(convs.parameters(), lr=args.lr, weight_decay=args.weight_decay)

    def forward(graphs, h):
        for i, conv in enumerate(convs):
            h = conv(graphs[i], h)
            if i + 1 < len(convs):
                h = F.dropout(F.relu(h), p=args.dropout, training=convs.training)
        return h

    def train_epoch():
        convs.train()
        total_loss, steps = 0.0, 0
        for i, (_, _, blocks) in enumerate(loader):
            if args.max_minibatches and i >= args.max_minibatches:
                break
            optimizer.zero_grad()
            out = forward(blocks, blocks[0].srcdata["feat"])
            loss = F.cross_entropy(out, blocks[-1].dstdata["label"])
            loss.backward()
            optimizer.step()
            total_loss += float(loss)
            steps += 1
        return total_loss / max(steps, 1)

    @torch.no_grad()
    def evaluate():
        convs.eval()
        return forward([graph] * len(convs), graph.ndata["feat"]).argmax(dim=1).numpy()

    return run_training(train_epoch, evaluate, data, args)


# ----------------------------------------------------------------------------- training

def run_training(train_epoch, evaluate, data, args):
    """Epoch loop shared by both peers: time each training epoch (evaluation apart), then
    full-neighbourhood evaluation; the final accuracy is the test accuracy at the epoch
    with the best validation accuracy (first one on ties), as bulkgnn train reports it."""
    epochs = []
    best = None
    for epoch in range(args.epochs):
        start = time.perf_counter()
        loss = train_epoch()
        seconds = time.perf_counter() - start
        record = {"epoch": epoch, "loss": loss, "seconds": seconds}
        if args.eval_every and ((epoch + 1) % args.eval_every == 0 or epoch + 1 == args.epochs):
            start = time.perf_counter()
            predicted = evaluate()
            record["eval_seconds"] = time.perf_counter() - start
            labels, split = data["labels"], data["split"]
            for part in ("valid", "test"):
                record[f"{part}_acc"] = float(np.mean(predicted[split[part]] == labels[split[part]]))
            if best is None or record["valid_acc"] > best["valid_acc"]:
                best = record
        epochs.append(record)
        print(f"  epoch {epoch}: loss {loss:.4f} {seconds:.3f} s"
              + (f" valid {record['valid_acc']:.4f} test {record['test_acc']:.4f}"
                 if "valid_acc" in record else ""), file=sys.stderr)
    return {"epochs": epochs,
            "final": {"best_epoch": best["epoch"], "valid_acc": best["valid_acc"],
                      "test_acc": best["test_acc"]} if best else None}


# ----------------------------------------------------------------------------- LADIES

def ladies_sample_epochs(data, args):
    """LADIES as bulkgnn defines it (sampler/include/bulkgnn/sampler/bulk_sampler.hpp):
    with Â = D̃⁻¹(A + I) and frontier F, column v is drawn with p(v) ∝ Σ_{u∈F} Â(u,v)²,
    fanouts[l] distinct columns without replacement; the sources are F followed by the
    drawn columns not already in F; the block keeps A + I's edges between them, weighted
    Â(u,v)/p(v), row-normalised; the next hop's frontier is this hop's sources.

    Weighted sampling without replacement uses exponential keys (Efraimidis-Spirakis:
    the s smallest of E_v / p(v)), which draws the same distribution as successive
    sampling with np.random.choice(replace=False, p=p)."""
    import scipy.sparse as sp
    n = data["num_nodes"]
    a_plus_i = sp.csr_matrix((np.ones(len(data["indices"]), dtype=np.float64),
                              data["indices"], data["indptr"]), shape=(n, n)) + \
        sp.identity(n, dtype=np.float64, format="csr")
    a_plus_i = a_plus_i.tocsr()
    a_plus_i.sum_duplicates()
    row_degree = np.diff(a_plus_i.indptr).astype(np.float64)
    a_hat = sp.diags(1.0 / row_degree) @ a_plus_i          # D̃⁻¹(A + I)
    a_hat_squared = a_hat.multiply(a_hat).tocsr()          # Â ∘ Â
    rng = np.random.default_rng(args.seed)
    seeds = data["seeds"]
    counts = {"minibatches": 0, "sampled_edges": 0, "input_nodes": 0, "feature_bytes": 0}
    start = time.perf_counter()
    for _ in range(args.epochs):
        order = rng.permutation(seeds)
        for i, first in enumerate(range(0, len(order), args.batch_size)):
            if args.max_minibatches and i >= args.max_minibatches:
                break
            frontier = order[first:first + args.batch_size]
            for fanout in args.fanouts:
                p = np.asarray(a_hat_squared[frontier].sum(axis=0)).ravel()
                candidates = np.flatnonzero(p)
                if len(candidates) <= fanout:
                    drawn = candidates
                else:
                    keys = rng.exponential(size=len(candidates)) / p[candidates]
                    drawn = candidates[np.argpartition(keys, fanout)[:fanout]]
                p = p / p.sum()
                sources = np.concatenate([frontier, drawn[~np.isin(drawn, frontier)]])
                block = a_hat[frontier][:, sources].multiply(1.0 / p[sources]).tocsr()
                row_sums = np.asarray(block.sum(axis=1)).ravel()
                row_sums[row_sums == 0] = 1.0
                block = sp.diags(1.0 / row_sums) @ block
                counts["sampled_edges"] += block.nnz
                frontier = sources
            counts["minibatches"] += 1
            counts["input_nodes"] += len(frontier)
    counts["seconds"] = time.perf_counter() - start
    return counts


# ----------------------------------------------------------------------------- main

def main():
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--system", required=True, choices=["pyg", "dgl", "bulkgnn-py", "bulkgnn-py-dgl",
                                                         "ladies-ref"])
    parser.add_argument("--workload", required=True, choices=["sample", "loader", "train"])
    parser.add_argument("--data", required=True, help="bulkgnn native dataset directory")
    parser.add_argument("--split", default="", help="split name (default: the first)")
    parser.add_argument("--fanouts", required=True,
                        help="per hop from the seeds, e.g. 15,10,5 (PyG/bulkgnn order)")
    parser.add_argument("--batch-size", type=int, default=1024)
    parser.add_argument("--epochs", type=int, default=1)
    parser.add_argument("--max-minibatches", type=int, default=0, help="per epoch, 0 = all")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--workers", type=int, default=0,
                        help="PyG/DGL loader worker processes (persistent)")
    parser.add_argument("--bulk", type=int, default=16,
                        help="bulkgnn-py: minibatches per sampler call")
    parser.add_argument("--prefetch", type=int, default=32,
                        help="bulkgnn-py: ready minibatches the loader may hold ahead")
    parser.add_argument("--from-memory", action="store_true",
                        help="bulkgnn-py, bulkgnn-py-dgl: the loader is built from what this "
                             "process read (bulkgnn-py: the PyG Data it trains on; "
                             "bulkgnn-py-dgl: the CSR arrays) instead of mapping the dataset's "
                             "files a second time")
    parser.add_argument("--hidden", type=int, default=128)
    parser.add_argument("--lr", type=float, default=0.01)
    parser.add_argument("--weight-decay", type=float, default=0.0)
    parser.add_argument("--dropout", type=float, default=0.5)
    parser.add_argument("--eval-every", type=int, default=1, help="0 = never")
    parser.add_argument("--device", default="cpu",
                        help="pyg and bulkgnn-py train workloads: where the model trains "
                             "(cpu or cuda)")
    parser.add_argument("--loader-device", default="cpu",
                        help="bulkgnn-py: where bulkgnn.NeighborLoader samples and gathers (cpu, "
                             "or cuda: its minibatches are then on the GPU already)")
    parser.add_argument("--json-out", help="write the result here (default: stdout)")
    args = parser.parse_args()
    args.fanouts = [int(f) for f in args.fanouts.split(",")]
    bulkgnn_system = args.system in ("bulkgnn-py", "bulkgnn-py-dgl")
    if args.from_memory and not bulkgnn_system:
        parser.error("--from-memory is for bulkgnn-py and bulkgnn-py-dgl")

    import torch
    torch.set_num_threads(args.threads)
    torch.manual_seed(args.seed)
    np.random.seed(args.seed)

    data = load_native(args.data, args.split,
                       need_features=args.workload in ("loader", "train"))
    result = {"system": args.system, "workload": args.workload, "data": args.data,
              "fanouts": args.fanouts, "batch_size": args.batch_size, "threads": args.threads,
              "workers": args.workers, "torch": torch.__version__,
              "omp_num_threads": os.environ.get("OMP_NUM_THREADS")}
    if bulkgnn_system:
        result["bulkgnn_loader"] = {"bulk": args.bulk, "prefetch": args.prefetch,
                                    "from_memory": args.from_memory}
    if args.system == "bulkgnn-py":
        import torch_geometric
        result["version"] = f"bulkgnn.NeighborLoader, torch-geometric {torch_geometric.__version__}"
        result["sampler_backend"] = "bulkgnn.NeighborLoader + to_pyg"
        if args.workload == "train":
            result.update(pyg_train(data, args))
        elif args.workload == "loader":
            _, loader, batch_of = pyg_batches(data, args)
            result.update(pyg_iterate(loader, args, True, batch_of=batch_of))
        else:
            parser.error("bulkgnn-py has the loader and train workloads")
    elif args.system == "bulkgnn-py-dgl":
        if args.workload != "train":
            parser.error("bulkgnn-py-dgl only has the train workload")
        import dgl
        result["version"] = f"bulkgnn.NeighborLoader, dgl {dgl.__version__}"
        result["sampler_backend"] = "bulkgnn.NeighborLoader + to_dgl"
        result.update(dgl_train(data, args))
    elif args.system == "pyg":
        import torch_geometric
        result["version"] = torch_geometric.__version__
        result["sampler_backend"] = pyg_sampler_backend()
        if args.workload == "train":
            result.update(pyg_train(data, args))
        else:
            with_features = args.workload == "loader"
            _, loader = pyg_loader(data, args, with_features)
            result.update(pyg_iterate(loader, args, with_features))
    elif args.system == "dgl":
        import dgl
        result["version"] = dgl.__version__
        result["sampler_backend"] = "dgl.dataloading.NeighborSampler"
        if args.workload == "train":
            result.update(dgl_train(data, args))
        else:
            with_features = args.workload == "loader"
            loader = dgl_loader(dgl_graph(data, with_features), data, args, with_features)
            result.update(dgl_iterate(loader, args, with_features))
    else:
        if args.workload != "sample":
            parser.error("ladies-ref only has the sample workload")
        import scipy
        result["version"] = f"numpy {np.__version__}, scipy {scipy.__version__}"
        result["sampler_backend"] = "python-port"
        result.update(ladies_sample_epochs(data, args))
    if "seconds" in result:
        result["minibatches_per_second"] = result["minibatches"] / result["seconds"]
        result["edges_per_second"] = result["sampled_edges"] / result["seconds"]
        result["feature_bytes_per_second"] = result["feature_bytes"] / result["seconds"]
    text = json.dumps(result, indent=1)
    if args.json_out:
        Path(args.json_out).write_text(text + "\n")
    else:
        print(text)


if __name__ == "__main__":
    main()
