"""Link prediction with bulkgnn.LinkNeighborLoader feeding a GraphSAGE in plain torch:
Hits@K and MRR over seeds, on a random link split (bulkgnn.random_link_split, PyG's
RandomLinkSplit semantics).

    PYTHONPATH=build/python /usr/bin/python3 benchmarks/python/link_prediction.py \\
        ../shared/data/facebook [--seeds 5] [--epochs 10] [--json out.json]

Protocol (PyG's link_pred example and OGB's collab evaluator):
- split 70/10/20 of the undirected edges, each seed its own split; one fixed
  negative per valid and test positive, none an edge of the graph;
- training minibatches: 512 positives of the training edges and as many uniform
  negatives, num_neighbors [10, 10] over the training graph, each minibatch's
  positives left out of its own blocks (exclude="reverse");
- model: two mean-aggregation SAGE layers (W_self h + W_neigh mean h_N), hidden 128,
  ReLU between, dot-product scores, binary cross-entropy, Adam lr 0.01;
- evaluation: full-neighbourhood inference over the training graph (valid) and over
  training + valid edges (test); Hits@K = the share of positives scoring above the
  K-th highest negative (OGB); MRR = the mean of 1 / (1 + negatives scoring at
  least the positive), all negatives shared; the test numbers at the epoch of the
  best valid Hits@50; AUC too (PyG's example reports it).
"""

import argparse
import json
import statistics
import time

import numpy as np
import torch

import bulkgnn


class Sage(torch.nn.Module):
    def __init__(self, features, hidden, layers=2):
        super().__init__()
        sizes = [features] + [hidden] * layers
        self.self_weights = torch.nn.ModuleList(
            torch.nn.Linear(a, b) for a, b in zip(sizes, sizes[1:]))
        self.neighbour_weights = torch.nn.ModuleList(
            torch.nn.Linear(a, b, bias=False) for a, b in zip(sizes, sizes[1:]))

    def layer(self, i, h_dst, mean_neighbours):
        out = self.self_weights[i](h_dst) + self.neighbour_weights[i](mean_neighbours)
        return torch.relu(out) if i + 1 < len(self.self_weights) else out

    def forward_blocks(self, x, blocks):
        """DGL-order blocks (blocks[0] input-most): rows are destinations, columns
        local sources, destinations first."""
        h = x
        for i, block in enumerate(blocks):
            indptr = torch.from_dlpack(block.indptr).long()
            indices = torch.from_dlpack(block.indices).long()
            degree = (indptr[1:] - indptr[:-1]).clamp(min=1).unsqueeze(1).float()
            rows = torch.repeat_interleave(torch.arange(block.num_dst), indptr[1:] - indptr[:-1])
            total = torch.zeros(block.num_dst, h.shape[1]).index_add_(0, rows, h[indices])
            h = self.layer(i, h[:block.num_dst], total / degree)
        return h

    @torch.no_grad()
    def forward_graph(self, x, adjacency, degree):
        h = x
        for i in range(len(self.self_weights)):
            h = self.layer(i, h, torch.sparse.mm(adjacency, h) / degree)
        return h


def adjacency_of(indptr, indices, n):
    indptr = torch.from_numpy(np.asarray(indptr, dtype=np.int64))
    rows = torch.repeat_interleave(torch.arange(n), indptr[1:] - indptr[:-1])
    cols = torch.from_numpy(np.asarray(indices, dtype=np.int64))
    adjacency = torch.sparse_coo_tensor(torch.stack([rows, cols]), torch.ones(len(cols)),
                                        (n, n)).coalesce()
    degree = (indptr[1:] - indptr[:-1]).clamp(min=1).unsqueeze(1).float()
    return adjacency, degree


def scores(z, pairs):
    pairs = torch.from_numpy(pairs).long()
    return (z[pairs[0]] * z[pairs[1]]).sum(dim=1)


def metrics(positive, negative):
    negative_sorted = torch.sort(negative, descending=True).values
    out = {}
    for k in (20, 50, 100):
        threshold = negative_sorted[min(k, len(negative_sorted)) - 1]
        out[f"hits@{k}"] = float((positive > threshold).float().mean())
    at_least = len(negative) - torch.searchsorted(torch.sort(negative).values, positive)
    out["mrr"] = float((1.0 / (1.0 + at_least.float())).mean())
    # The chance a positive outscores a negative (ties half): PyG's example reports it.
    below = torch.searchsorted(torch.sort(negative).values, positive, right=False).float()
    ties = torch.searchsorted(torch.sort(negative).values, positive, right=True).float() - below
    out["auc"] = float(((below + 0.5 * ties) / len(negative)).mean())
    return out


def run(ds, seed, args):
    torch.manual_seed(seed)
    split = bulkgnn.random_link_split(ds, seed=seed)
    features = np.array(ds.features)  # a writable copy for torch
    train_ds = bulkgnn.Dataset.from_arrays(indptr=split["train_graph"][0],
                                           indices=split["train_graph"][1], features=features)
    loader = bulkgnn.LinkNeighborLoader(train_ds, num_neighbors=[10, 10],
                                        edge_label_index=split["train"], neg_sampling_ratio=1.0,
                                        batch_size=args.batch_size, shuffle=True, seed=seed)
    model = Sage(ds.num_features, args.hidden)
    optimiser = torch.optim.Adam(model.parameters(), lr=0.01)
    x_all = torch.from_numpy(features)
    valid_graph = adjacency_of(*split["train_graph"], ds.num_nodes)
    test_graph = adjacency_of(*split["test_graph"], ds.num_nodes)
    best = {"valid": {"hits@50": -1.0}}
    load_seconds = train_seconds = 0.0
    for epoch in range(args.epochs):
        model.train()
        clock = time.perf_counter()
        for mb in loader:
            loaded = time.perf_counter()
            load_seconds += loaded - clock
            x = torch.from_dlpack(mb.features)
            z = model.forward_blocks(x, mb.blocks)
            pairs = torch.from_dlpack(mb.edge_label_index).long()
            logits = (z[pairs[0]] * z[pairs[1]]).sum(dim=1)
            loss = torch.nn.functional.binary_cross_entropy_with_logits(
                logits, torch.from_dlpack(mb.edge_label))
            optimiser.zero_grad()
            loss.backward()
            optimiser.step()
            clock = time.perf_counter()
            train_seconds += clock - loaded
        model.eval()
        z_valid = model.forward_graph(x_all, *valid_graph)
        valid = metrics(scores(z_valid, split["valid"]), scores(z_valid, split["valid_negatives"]))
        if valid["hits@50"] > best["valid"]["hits@50"]:
            z_test = model.forward_graph(x_all, *test_graph)
            best = {"epoch": epoch + 1, "valid": valid,
                    "test": metrics(scores(z_test, split["test"]),
                                    scores(z_test, split["test_negatives"]))}
    best["load_seconds_per_epoch"] = load_seconds / args.epochs
    best["train_seconds_per_epoch"] = train_seconds / args.epochs
    return best


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("dataset")
    parser.add_argument("--seeds", type=int, default=5)
    parser.add_argument("--epochs", type=int, default=10)
    parser.add_argument("--batch-size", type=int, default=512)
    parser.add_argument("--hidden", type=int, default=128)
    parser.add_argument("--json")
    args = parser.parse_args()
    torch.set_num_threads(2)
    ds = bulkgnn.Dataset(args.dataset)
    runs = []
    for seed in range(args.seeds):
        result = run(ds, seed, args)
        runs.append(result)
        print(f"seed {seed}: best epoch {result['epoch']}, test " +
              ", ".join(f"{k} {v:.4f}" for k, v in result["test"].items()) +
              f"; {result['load_seconds_per_epoch']:.2f} s loading, "
              f"{result['train_seconds_per_epoch']:.2f} s training per epoch", flush=True)
    summary = {}
    for key in runs[0]["test"]:
        values = [r["test"][key] for r in runs]
        summary[key] = {"mean": statistics.mean(values),
                        "std": statistics.stdev(values) if len(values) > 1 else 0.0}
    print(f"{ds.name}: " + ", ".join(f"{k} {v['mean']:.4f} ± {v['std']:.4f}"
                                     for k, v in summary.items()) + f" over {len(runs)} seeds")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"dataset": ds.name, "runs": runs, "summary": summary}, f, indent=1)


if __name__ == "__main__":
    main()
