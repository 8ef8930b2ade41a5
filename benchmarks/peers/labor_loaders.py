"""LABOR side by side: bulkgnn.NeighborLoader(sampler="labor" / "labor-star") and DGL's
LaborSampler(importance_sampling=0 / -1) on the same data, seeds and fanouts.

Run with the peer environment (benchmarks/peers/setup_venv.sh) and bulkgnn's Python
package on the path:

    PYTHONPATH=build/python ~/.cache/bulkgnn-peers-venv/bin/python \\
        benchmarks/peers/labor_loaders.py loader ../shared/data/facebook \\
        ../shared/data/coauthor-cs
    PYTHONPATH=build/python ~/.cache/bulkgnn-peers-venv/bin/python \\
        benchmarks/peers/labor_loaders.py train ../shared/data/facebook

Every training vertex of the dataset's split a seed, 1,024 per minibatch, shuffled,
fanouts 15,10,5 (loader) or 10,10 (train); 2 threads for everyone; DGL's DataLoader in the
process (num_workers=0).

  loader  epochs of minibatches as a trainer consumes them (input features touched), each
          system alternately in this process, the median epoch over --repetitions; input
          vertices and block edges per minibatch: what LABOR exists to cut.
  train   the same DGL model (two SAGE layers, hidden 256, dropout 0.5, Adam 0.003: each
          destination's kept neighbours averaged with the sampler's edge weights divided
          by their sum, the plain mean without weights; evaluation: the mean over the
          whole graph) fed by bulkgnn's and DGL's LABOR-0 and LABOR-*, --seeds seeds,
          --epochs epochs; test accuracy at the epoch of the best validation accuracy.
"""

import statistics
import time

import numpy as np
import torch

import bulkgnn
from alternating import alternate, loader_or_train_arguments, seeds_of, write_rows

BATCH = 1024
LOADER_FANOUTS = [15, 10, 5]
TRAIN_FANOUTS = [10, 10]
HIDDEN = 256

# name: (bulkgnn sampler, DGL's importance_sampling)
VARIANTS = {"LABOR-0": ("labor", 0), "LABOR-*": ("labor-star", -1)}


def bulkgnn_loader(ds, train, sampler, fanouts, seed):
    return bulkgnn.NeighborLoader(ds, input_nodes=train, num_neighbors=fanouts,
                                  batch_size=BATCH, shuffle=True, sampler=sampler, seed=seed,
                                  threads=2)


def dgl_graph(ds):
    import dgl
    indptr, indices = np.asarray(ds.indptr), np.asarray(ds.indices)
    targets = np.repeat(np.arange(ds.num_nodes, dtype=np.int64), np.diff(indptr))
    # Row v of bulkgnn's CSR lists the sources of the edges into v.
    return dgl.graph((torch.from_numpy(indices.astype(np.int64)), torch.from_numpy(targets)),
                     num_nodes=ds.num_nodes)


def dgl_loader(graph, train, importance_sampling, fanouts):
    import dgl
    # DGL lists fanouts input-most first; bulkgnn and PyG from the seeds.
    sampler = dgl.dataloading.LaborSampler(list(reversed(fanouts)),
                                           importance_sampling=importance_sampling)
    return dgl.dataloading.DataLoader(graph, torch.from_numpy(train.astype(np.int64)), sampler,
                                      batch_size=BATCH, shuffle=True, num_workers=0)


def consume_bulkgnn(loader):
    inputs = edges = minibatches = 0
    for mb in loader:
        float(np.asarray(mb.features)[0, 0])
        inputs += len(np.asarray(mb.input_nodes))
        edges += sum(int(b.num_edges) for b in mb.blocks)
        minibatches += 1
    return inputs / minibatches, edges / minibatches


def consume_dgl(parts):
    loader, features = parts
    inputs = edges = minibatches = 0
    for input_nodes, _, blocks in loader:
        float(features[input_nodes][0, 0])
        inputs += len(input_nodes)
        edges += sum(int(b.num_edges()) for b in blocks)
        minibatches += 1
    return inputs / minibatches, edges / minibatches


def measure_loaders(path, args):
    ds = bulkgnn.Dataset(path)
    train = np.asarray(ds.training_vertices())
    graph = dgl_graph(ds)
    features = torch.from_numpy(np.asarray(ds.features))
    systems, base_of = {}, {}
    for variant, (sampler, importance) in VARIANTS.items():
        ours, theirs = f"bulkgnn {sampler}", f"DGL LaborSampler {variant}"
        systems[ours] = (bulkgnn_loader(ds, train, sampler, LOADER_FANOUTS, 0), consume_bulkgnn)
        systems[theirs] = (
            (dgl_loader(graph, train, importance, LOADER_FANOUTS), features), consume_dgl)
        base_of[ours] = base_of[theirs] = ours
    seconds, counts, medians = alternate(systems, args.repetitions)
    rows = []
    for name in systems:
        inputs, edges = counts[name]
        base = base_of[name]
        rows.append({"dataset": ds.name, "system": name, "seconds_per_epoch": medians[name],
                     "times_bulkgnn": medians[name] / medians[base],
                     "inputs_per_minibatch": inputs, "edges_per_minibatch": edges,
                     "all_seconds": seconds[name]})
        print(f"| {ds.name} | {name} | {medians[name]:.3f} | "
              f"{medians[name] / medians[base]:.1f}x | {inputs:,.0f} | {edges:,.0f} |",
              flush=True)
    return rows


class Model(torch.nn.Module):
    """Two SAGE layers whose neighbour mean takes the block's edge weights, each
    destination's divided by their sum (the plain mean where a block has none)."""

    def __init__(self, features, classes):
        super().__init__()
        sizes = [features, HIDDEN, classes]
        self.neighbours = torch.nn.ModuleList(
            [torch.nn.Linear(sizes[i], sizes[i + 1]) for i in range(2)])
        self.roots = torch.nn.ModuleList(
            [torch.nn.Linear(sizes[i], sizes[i + 1], bias=False) for i in range(2)])

    @staticmethod
    def aggregate(block, h, weights):
        import dgl.function as fn
        with block.local_scope():
            block.srcdata["h"] = h
            if weights is None:
                block.update_all(fn.copy_u("h", "m"), fn.mean("m", "neigh"))
            else:
                block.edata["w"] = weights.reshape(-1, 1).float()
                block.update_all(fn.copy_e("w", "m"), fn.sum("m", "total"))
                block.apply_edges(fn.e_div_v("w", "total", "normalised"))
                block.update_all(fn.u_mul_e("h", "normalised", "m"), fn.sum("m", "neigh"))
            return block.dstdata["neigh"]

    def forward(self, blocks, x, weights):
        h = x
        for layer, (block, w) in enumerate(zip(blocks, weights)):
            h = torch.nn.functional.dropout(h, 0.5, self.training)
            h = self.neighbours[layer](self.aggregate(block, h, w)) + \
                self.roots[layer](h[:block.num_dst_nodes()])
            if layer == 0:
                h = h.relu()
        return h


def bulkgnn_batches(ds, train, sampler, seed):
    loader = bulkgnn_loader(ds, train, sampler, TRAIN_FANOUTS, seed)

    def batches():
        for mb in loader:
            input_nodes, output_nodes, blocks = mb.to_dgl()
            weights = [b.edata["w"] if "w" in b.edata else None for b in blocks]
            yield input_nodes, blocks, weights, torch.from_dlpack(mb.labels).long()
    return batches


def dgl_batches(graph, labels, train, importance, seed):
    torch.manual_seed(seed)
    loader = dgl_loader(graph, train, importance, TRAIN_FANOUTS)

    def batches():
        for input_nodes, output_nodes, blocks in loader:
            weights = [b.edata["edge_weights"] if "edge_weights" in b.edata else None
                       for b in blocks]
            yield input_nodes, blocks, weights, labels[output_nodes]
    return batches


def train_one(ds, graph, features, labels, masks, batches, seed, epochs):
    import dgl
    torch.manual_seed(seed)
    model = Model(features.shape[1], ds.num_classes)
    optimizer = torch.optim.Adam(model.parameters(), lr=0.003)
    whole = [dgl.to_block(graph, torch.arange(ds.num_nodes))] * 2
    best = (-1.0, 0.0)
    seconds = []
    for _ in range(epochs):
        model.train()
        start = time.perf_counter()
        for input_nodes, blocks, weights, y in batches():
            optimizer.zero_grad()
            out = model(blocks, features[input_nodes], weights)
            torch.nn.functional.cross_entropy(out, y).backward()
            optimizer.step()
        seconds.append(time.perf_counter() - start)
        model.eval()
        with torch.no_grad():
            predicted = model(whole, features, [None, None]).argmax(dim=1)
        valid = float((predicted[masks[1]] == labels[masks[1]]).float().mean())
        if valid > best[0]:
            best = (valid, float((predicted[masks[2]] == labels[masks[2]]).float().mean()))
    return {"seed": seed, "test_acc": best[1], "seconds_per_epoch": statistics.median(seconds)}


def measure_training(path, args):
    import dgl
    from cluster_loaders import split_masks
    # DGL 2.1's libxsmm SpMM fails a null check on some weighted blocks (either
    # loader's); its plain kernels give the same sums.
    dgl.use_libxsmm(False)
    ds = bulkgnn.Dataset(path)
    train = np.asarray(ds.training_vertices())
    graph = dgl_graph(ds)
    features = torch.from_numpy(np.asarray(ds.features))
    labels = torch.from_numpy(np.asarray(ds.labels)).long()
    masks = split_masks(ds)
    rows = []
    for variant, (sampler, importance) in VARIANTS.items():
        for fed_by in ("bulkgnn", "DGL"):
            runs = []
            for seed in seeds_of(args):
                batches = bulkgnn_batches(ds, train, sampler, seed) if fed_by == "bulkgnn" \
                    else dgl_batches(graph, labels, train, importance, seed)
                runs.append(train_one(ds, graph, features, labels, masks, batches, seed,
                                      args.epochs))
            accuracy = [r["test_acc"] for r in runs]
            seconds = statistics.median(r["seconds_per_epoch"] for r in runs)
            print(f"| {ds.name} | {variant} | {fed_by} | {statistics.mean(accuracy):.4f} ± "
                  f"{statistics.stdev(accuracy) if len(accuracy) > 1 else 0:.4f} | "
                  f"{seconds:.2f} |", flush=True)
            rows.append({"dataset": ds.name, "variant": variant, "fed_by": fed_by,
                         "runs": runs})
    return rows


def main():
    args = loader_or_train_arguments(__doc__, epochs=20)
    if args.mode == "loader":
        print("| dataset | loader | s/epoch (median) | × bulkgnn | input vertices/minibatch "
              "| block edges/minibatch |")
        print("|---|---|---|---|---|---|")
        rows = [row for path in args.datasets for row in measure_loaders(path, args)]
    else:
        print("| dataset | sampler | DGL model fed by | test accuracy | s/epoch |")
        print("|---|---|---|---|---|")
        rows = [row for path in args.datasets for row in measure_training(path, args)]
    write_rows(rows, args.json)


if __name__ == "__main__":
    main()
