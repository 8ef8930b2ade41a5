#!/usr/bin/env python3
"""Every sampler of the table on the same datasets, model, settings and seeds:
one table a paper could print, and accuracy-against-time curves.

For each dataset and sampler (`bulkgnn train` with the sampler's fanouts of
its unit, the dataset's settings below, seeds 0..S-1; Cluster-GCN with -1 per
layer, one cluster per 150 vertices, and the clusters per minibatch that give
as many minibatches an epoch as the dataset's batch size of seeds; GraphSAINT
with -1 per layer and the budget whose default epoch has as many subgraphs,
walks of 2 steps, the normalisation from coverage 100 as PyG's examples):
  - test accuracy at each run's best validation epoch, mean ± std;
  - time per epoch (median over epochs and seeds) and the pipeline stages'
    busy time in it: sampling, feature gather, training (the consumer);
  - per minibatch (one `bulkgnn sample --gather-features` epoch, seed 0):
    sampled edges, input vertices and feature megabytes gathered;
  - the convergence curve: validation accuracy against cumulative training
    seconds, averaged over the seeds epoch by epoch.

    benchmarks/sampler/compare_samplers.py [--bulkgnn build/tools/bulkgnn]
        [--data ../shared/data] [--datasets cora,facebook,amazon-photo,coauthor-cs]
        [--samplers sage,ladies,...] [--seeds 5] [--epochs N] [--threads 2]
        [--out benchmarks/sampler/results]

With --time-only GRAPH (a dataset directory, such as the products-sized
R-MAT of `bulkgnn generate rmat DIR --scale 21 --edge-factor 30 --features
100 --classes 47`) it only samples and gathers there, at the products
setting (15,10,5 or 4096 per hop, batch 1024, --max-minibatches 20), and
writes OUT/compare-time.json and .md: seconds, minibatches per second, and
per minibatch edges, input vertices and feature megabytes (rows of samplers
not run this time are kept from an earlier OUT/compare-time.json).

writes OUT/compare.json (every run), OUT/compare.md (the table) and, where
matplotlib imports (Debian's python3-matplotlib, or the peers venv),
OUT/convergence-DATASET.png. Results of (dataset, sampler) pairs not run this
time are kept from an earlier OUT/compare.json, so datasets and samplers can
be run a few at a time.
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

# Settings per dataset: split, batch size, epochs and the model's training
# settings that benchmarks/accuracy chose for sage there (by validation
# accuracy), held fixed for every sampler so that only the sampler changes.
DATASETS = {
    "cora": {"split": "public", "batch_size": 64, "epochs": 60, "lr": 0.01,
             "weight_decay": 5e-4},
    "facebook": {"split": "random-60-20-20", "batch_size": 512, "epochs": 30, "lr": 0.01,
                 "weight_decay": 0.0},
    "amazon-photo": {"split": "random-60-20-20", "batch_size": 512, "epochs": 40, "lr": 0.01,
                     "weight_decay": 0.0},
    "coauthor-cs": {"split": "random-60-20-20", "batch_size": 512, "epochs": 30, "lr": 0.01,
                    "weight_decay": 0.0},
}
MODEL = {"hidden": 128, "dropout": 0.5}
# Fanouts by what a fanout counts (sampler_entry::fanout); a sampler whose
# minibatches are subgraphs (Cluster-GCN, GraphSAINT) runs every layer on all
# edges of its subgraph.
FANOUTS = {"per destination": "10,10", "per minibatch": "512,512", "clusters": "-1,-1",
           "budget": "-1,-1"}
# Vertices a GraphSAINT draw adds at most: a vertex, an edge's two ends, a
# walk of the default 2 steps.
SAINT_VERTICES_PER_DRAW = {"saint-node": 1, "saint-edge": 2, "saint-rw": 3}
# Cluster-GCN's clusters: one per 150 vertices (the sampler's default, as
# PyG's Reddit and products examples).
VERTICES_PER_CLUSTER = 150


def import_package(bulkgnn):
    """The Python package built beside the command."""
    build = os.path.dirname(os.path.dirname(os.path.abspath(bulkgnn)))
    sys.path.insert(0, os.path.join(build, "python"))
    try:
        import bulkgnn as package
        return package
    except ImportError:
        sys.exit(f"compare_samplers: cannot import bulkgnn from {build}/python; build it first")


def sampler_table(bulkgnn):
    """(name, fanout unit) of every sampler, in the table's order; the unit
    of a sampler whose minibatches are subgraphs is "clusters" (Cluster-GCN)
    or "budget" (GraphSAINT)."""
    def unit(s):
        if not s["batches_subgraphs"]:
            return s["fanout"]
        return "budget" if s["name"] in SAINT_VERTICES_PER_DRAW else "clusters"
    return [(s["name"], unit(s)) for s in import_package(bulkgnn).samplers()]


def batch_size_for_steps(sampler, unit, vertices, steps):
    """The batch size of a sampler whose minibatches are subgraphs that gives
    `steps` minibatches an epoch: clusters per minibatch, or a GraphSAINT
    budget whose default epoch (⌈N / (budget · vertices per draw)⌉) has
    that many subgraphs."""
    if unit == "clusters":
        return max(1, round(-(-vertices // VERTICES_PER_CLUSTER) / steps))
    return max(1, vertices // (steps * SAINT_VERTICES_PER_DRAW[sampler]))


def batch_size_of(args, dataset, sampler, unit):
    """The dataset's seeds per minibatch; for a sampler whose minibatches are
    subgraphs, the batch size that gives as many minibatches (optimiser
    steps) an epoch."""
    s = DATASETS[dataset]
    if unit not in ("clusters", "budget"):
        return s["batch_size"]
    data = import_package(args.bulkgnn).Dataset(os.path.join(args.data, dataset))
    steps = -(-len(data.training_vertices(s["split"])) // s["batch_size"])
    return batch_size_for_steps(sampler, unit, data.num_nodes, steps)


def run_json(command, metrics):
    started = time.monotonic()
    done = subprocess.run(command + ["--metrics-out", metrics], capture_output=True, text=True)
    if done.returncode != 0:
        sys.exit(f"compare_samplers: {' '.join(command)} failed:\n{done.stderr}")
    with open(metrics) as f:
        return json.load(f), time.monotonic() - started


def train_runs(args, dataset, sampler, fanouts, batch_size, tmp):
    s = DATASETS[dataset]
    base = [args.bulkgnn, "train", os.path.join(args.data, dataset), "--split", s["split"],
            "--sampler", sampler, "--fanouts", fanouts, "--batch-size", str(batch_size),
            "--epochs", str(args.epochs or s["epochs"]), "--hidden", str(MODEL["hidden"]),
            "--dropout", str(MODEL["dropout"]), "--lr", str(s["lr"]),
            "--weight-decay", str(s["weight_decay"]), "--threads", str(args.threads), "--quiet"]
    runs = []
    for seed in range(args.seeds):
        metrics, _ = run_json(base + ["--seed", str(seed)], os.path.join(tmp, "train.json"))
        runs.append(metrics)
    return runs, " ".join(base + ["--seed", "S"]) + f"   # S = 0..{args.seeds - 1}"


def per_minibatch(args, dataset, sampler, fanouts, batch_size, tmp):
    s = DATASETS[dataset]
    command = [args.bulkgnn, "sample", os.path.join(args.data, dataset), "--split", s["split"],
               "--sampler", sampler, "--fanouts", fanouts, "--batch-size", str(batch_size),
               "--gather-features", "--threads", str(args.threads)]
    metrics, _ = run_json(command, os.path.join(tmp, "sample.json"))
    count = metrics["minibatches"]
    features = metrics["features"]
    return {
        "edges": metrics["sampled_edges"] / count,
        "input_vertices": features["rows_gathered"] / count,
        "feature_mb": (features["bytes_from_table"] + features["bytes_from_cache"]) / count / 1e6,
        "command": " ".join(command),
    }


TIME_ONLY_FANOUTS = {"per destination": "15,10,5", "per minibatch": "4096,4096,4096",
                     "clusters": "-1,-1,-1", "budget": "-1,-1,-1"}
# Clusters per minibatch at the products setting: PyG's products example
# (15,000 clusters, 32 per minibatch) scaled to the graph's default clusters.
TIME_ONLY_CLUSTER_FRACTION = 32 / 15000
# GraphSAINT at the products setting: subgraphs of about PyG's Reddit and
# Flickr examples' 18,000 vertices (6,000 walk roots of 2 steps), the
# normalisation from coverage 10 (presampling 10 N vertices; PyG's 100 would
# take tens of minutes on two cores).
TIME_ONLY_SAINT_VERTICES = 18000
TIME_ONLY_SAINT_COVERAGE = "10"


def sampling_times(args, table, wanted):
    """Each sampler sampling and gathering 20 minibatches on one graph."""
    results = []
    with tempfile.TemporaryDirectory() as tmp:
        for name, unit in table:
            if name not in wanted:
                continue
            batch_size = 1024
            extra = []
            if unit == "clusters":
                vertices = import_package(args.bulkgnn).Dataset(args.time_only).num_nodes
                clusters = -(-vertices // VERTICES_PER_CLUSTER)
                batch_size = max(1, round(clusters * TIME_ONLY_CLUSTER_FRACTION))
            elif unit == "budget":
                batch_size = TIME_ONLY_SAINT_VERTICES // SAINT_VERTICES_PER_DRAW[name]
                extra = ["--coverage", TIME_ONLY_SAINT_COVERAGE]
            command = [args.bulkgnn, "sample", args.time_only, "--sampler", name, "--fanouts",
                       TIME_ONLY_FANOUTS[unit], "--batch-size", str(batch_size),
                       "--max-minibatches", "20", "--gather-features", "--threads",
                       str(args.threads), *extra]
            metrics, _ = run_json(command, os.path.join(tmp, "sample.json"))
            count = metrics["minibatches"]
            features = metrics["features"]
            results.append({
                "sampler": name, "fanouts": TIME_ONLY_FANOUTS[unit],
                "sample_seconds": metrics["seconds"], "gather_seconds": features["seconds"],
                "minibatches_per_second": count / (metrics["seconds"] + features["seconds"]),
                "edges": metrics["sampled_edges"] / count,
                "input_vertices": features["rows_gathered"] / count,
                "feature_mb": (features["bytes_from_table"] + features["bytes_from_cache"])
                / count / 1e6,
                "command": " ".join(command)})
            print(f"{name}: {results[-1]['minibatches_per_second']:.1f} minibatches/s", flush=True)
    stored = os.path.join(args.out, "compare-time.json")
    if os.path.exists(stored):
        with open(stored) as f:
            ran = {r["sampler"] for r in results}
            results = [r for r in json.load(f) if r["sampler"] not in ran] + results
    lines = ["| sampler | fanouts | sample s | gather s | minibatches/s | edges/minibatch | "
             "input vertices/minibatch | feature MB/minibatch |",
             "|---|---|---:|---:|---:|---:|---:|---:|"]
    for r in results:
        lines.append(f"| {r['sampler']} | {r['fanouts']} | {r['sample_seconds']:.2f} | "
                     f"{r['gather_seconds']:.2f} | {r['minibatches_per_second']:.1f} | "
                     f"{r['edges']:,.0f} | {r['input_vertices']:,.0f} | {r['feature_mb']:.1f} |")
    with open(stored, "w") as f:
        json.dump(results, f, indent=1)
    with open(os.path.join(args.out, "compare-time.md"), "w") as f:
        f.write("\n".join(lines) + "\n")
    print("\n".join(lines))


def summarise(runs):
    tests = [r["final"]["test_acc"] for r in runs]
    epochs = [e for r in runs for e in r["epochs"]]

    def median_of(key):
        return statistics.median(key(e) for e in epochs)

    # The convergence curve: epoch by epoch over the seeds, validation
    # accuracy against the training seconds spent so far.
    curve = []
    for i in range(min(len(r["epochs"]) for r in runs)):
        seconds = statistics.mean(sum(e["seconds"] for e in r["epochs"][:i + 1]) for r in runs)
        valid = statistics.mean(r["epochs"][i]["valid_acc"] for r in runs)
        curve.append([seconds, valid])
    return {
        "tests": tests,
        "test_mean": statistics.mean(tests),
        "test_std": statistics.stdev(tests) if len(tests) > 1 else 0.0,
        "epoch_seconds": median_of(lambda e: e["seconds"]),
        "sample_seconds": median_of(lambda e: e["stages"]["sample"]["busy"]),
        "gather_seconds": median_of(lambda e: e["stages"]["gather"]["busy"]),
        "train_seconds": median_of(lambda e: e["stages"]["consume"]["busy"]),
        "curve": curve,
    }


def markdown(results, seeds):
    lines = [
        f"| dataset | sampler | fanouts | test accuracy ({seeds} seeds) | s/epoch | sample | "
        "gather | train | edges/minibatch | input vertices/minibatch | feature MB/minibatch |",
        "|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for r in results:
        fanouts = r["fanouts"]
        if r["sampler"] in SAINT_VERTICES_PER_DRAW:
            fanouts += f", budget {r['batch_size']}"
        elif fanouts == FANOUTS["clusters"]:
            fanouts += f", {r['batch_size']} clusters/minibatch"
        lines.append(
            f"| {r['dataset']} | {r['sampler']} | {fanouts} | "
            f"{r['test_mean']:.4f} ± {r['test_std']:.4f} | {r['epoch_seconds']:.3f} | "
            f"{r['sample_seconds']:.3f} | {r['gather_seconds']:.3f} | {r['train_seconds']:.3f} | "
            f"{r['per_minibatch']['edges']:,.0f} | {r['per_minibatch']['input_vertices']:,.0f} | "
            f"{r['per_minibatch']['feature_mb']:.2f} |")
    return "\n".join(lines) + "\n"


def plot(results, out):
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("compare_samplers: matplotlib is missing; no plots (the peers venv has it)")
        return
    for dataset in dict.fromkeys(r["dataset"] for r in results):
        fig, ax = plt.subplots(figsize=(6, 4))
        for r in (r for r in results if r["dataset"] == dataset):
            seconds, valid = zip(*r["curve"])
            ax.plot(seconds, valid, label=r["sampler"])
        ax.set_xlabel("training seconds (mean over seeds)")
        ax.set_ylabel("validation accuracy")
        ax.set_title(f"{dataset}: accuracy against time")
        ax.legend()
        fig.tight_layout()
        fig.savefig(os.path.join(out, f"convergence-{dataset}.png"), dpi=120)
        plt.close(fig)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bulkgnn", default="build/tools/bulkgnn")
    parser.add_argument("--data", default="../shared/data")
    parser.add_argument("--datasets", default=",".join(DATASETS))
    parser.add_argument("--samplers", help="names from the table (default: every one)")
    parser.add_argument("--seeds", type=int, default=5)
    parser.add_argument("--epochs", type=int, help="override each dataset's epochs")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--out", default="benchmarks/sampler/results")
    parser.add_argument("--time-only", metavar="GRAPH",
                        help="only sample and gather on GRAPH, at the products setting")
    args = parser.parse_args()
    if not os.access(args.bulkgnn, os.X_OK):
        sys.exit(f"compare_samplers: {args.bulkgnn} is not an executable; build it first")
    table = sampler_table(args.bulkgnn)
    wanted = args.samplers.split(",") if args.samplers else [name for name, _ in table]
    unknown = set(wanted) - {name for name, _ in table}
    if unknown:
        sys.exit(f"compare_samplers: no sampler {', '.join(sorted(unknown))} in the table")
    os.makedirs(args.out, exist_ok=True)
    if args.time_only:
        if not os.path.isdir(args.time_only):
            sys.exit(f"compare_samplers: {args.time_only} is missing")
        sampling_times(args, table, wanted)
        return
    datasets = args.datasets.split(",")
    for d in datasets:
        if d not in DATASETS:
            sys.exit(f"compare_samplers: no settings for dataset {d} (known: {', '.join(DATASETS)})")
        if not os.path.isdir(os.path.join(args.data, d)):
            sys.exit(f"compare_samplers: {os.path.join(args.data, d)} is missing")
    os.makedirs(args.out, exist_ok=True)
    results = []
    with tempfile.TemporaryDirectory() as tmp:
        for dataset in datasets:
            for name, unit in table:
                if name not in wanted:
                    continue
                fanouts = FANOUTS[unit]
                batch_size = batch_size_of(args, dataset, name, unit)
                started = time.monotonic()
                runs, command = train_runs(args, dataset, name, fanouts, batch_size, tmp)
                result = {"dataset": dataset, "sampler": name, "fanouts": fanouts,
                          "batch_size": batch_size, **summarise(runs), "command": command,
                          "per_minibatch": per_minibatch(args, dataset, name, fanouts, batch_size,
                                                         tmp)}
                results.append(result)
                print(f"{dataset} {name}: test {result['test_mean']:.4f} ± "
                      f"{result['test_std']:.4f}, {result['epoch_seconds']:.3f} s/epoch "
                      f"({time.monotonic() - started:.0f} s)", flush=True)
    stored = os.path.join(args.out, "compare.json")
    if os.path.exists(stored):
        with open(stored) as f:
            ran = {(r["dataset"], r["sampler"]) for r in results}
            kept = [r for r in json.load(f) if (r["dataset"], r["sampler"]) not in ran]
        results = kept + results
    with open(stored, "w") as f:
        json.dump(results, f, indent=1)
    with open(os.path.join(args.out, "compare.md"), "w") as f:
        f.write(markdown(results, args.seeds))
    plot(results, args.out)
    print(markdown(results, args.seeds))


if __name__ == "__main__":
    main()
