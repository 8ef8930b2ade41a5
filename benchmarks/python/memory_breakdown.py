#!/usr/bin/env python3
"""Where the peak memory of a PyG training script fed by bulkgnn goes, next to the same
script fed by PyG's NeighborLoader: each configuration a process of its own
(benchmarks/peers/peer_workloads.py, train workload, no evaluation), its peak resident
memory read from os.wait4, configurations alternating per round; then the edges each
loader hands the model per minibatch and the messages each layer computes from them (were
bulkgnn's more, its activations would be larger).

    PYTHONPATH=build/python ~/.cache/bulkgnn-peers-venv/bin/python \\
        benchmarks/python/memory_breakdown.py NATIVE_DIR [--rounds 3] [--epochs 4] \\
        [--max-minibatches N]

Configurations: pyg; bulkgnn (the loader's defaults, bulk 32, prefetch 32); bulkgnn
without the allocator tuning (mallopt made a no-op by a preloaded shim compiled with cc);
bulkgnn reading ahead less (bulk 4, prefetch 2); bulkgnn mapping the dataset's files
instead of building its dataset from the PyG Data the script holds (CSR built from
edge_index, features viewed).
"""

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from pyg_user import SYSTEMS, WORKLOADS, run_measured

# name: (peer_workloads.py's arguments, whether mallopt is made a no-op), from pyg_user's
# systems so that the rows are the ones its table measures.
CONFIGURATIONS = {
    "pyg": (SYSTEMS["pyg"], False),
    "bulkgnn": (SYSTEMS["bulkgnn"], False),
    "bulkgnn, no mallopt": (SYSTEMS["bulkgnn"], True),
    "bulkgnn, bulk 4 prefetch 2": (SYSTEMS["bulkgnn-lean"], False),
    "bulkgnn, files mapped": ([a for a in SYSTEMS["bulkgnn"] if a != "--from-memory"], False),
}
NO_MALLOPT = "int mallopt(int param, int value) { (void)param; (void)value; return 1; }\n"


def no_mallopt_shim(directory):
    source, library = Path(directory) / "no_mallopt.c", Path(directory) / "no_mallopt.so"
    source.write_text(NO_MALLOPT)
    subprocess.run(["cc", "-shared", "-fPIC", "-O2", "-o", str(library), str(source)], check=True)
    return library


def train_run(arguments, args, preload):
    """(median epoch seconds after the first, peak RSS MiB) of one training process."""
    environment = dict(os.environ)
    if preload:
        environment["LD_PRELOAD"] = " ".join(filter(None, [str(preload),
                                                           os.environ.get("LD_PRELOAD")]))
    result, rss = run_measured(
        [sys.executable, str(WORKLOADS), *arguments, "--workload", "train", "--data",
         str(args.data), "--fanouts", args.fanouts, "--batch-size", str(args.batch_size),
         "--epochs", str(args.epochs), "--max-minibatches", str(args.max_minibatches),
         "--threads", "2", "--eval-every", "0"], environment)
    seconds = [e["seconds"] for e in result["epochs"]]
    return statistics.median(seconds[1:] or seconds), rss


def messages_per_layer(args):
    """Per loader: mean edges per minibatch and the mean messages each layer computes once
    PyG's trim_to_layer has dropped the outer hops (at most --max-minibatches)."""
    sys.path.insert(0, str(WORKLOADS.parent))
    import numpy as np
    import peer_workloads as workloads
    data = workloads.load_native(str(args.data), "", True)
    rows = {}
    for system in ("pyg", "bulkgnn-py"):
        options = argparse.Namespace(
            data=str(args.data), fanouts=[int(f) for f in args.fanouts.split(",")],
            batch_size=args.batch_size, seed=0, bulk=32, prefetch=32, threads=2, workers=0,
            system=system, from_memory=True)
        _, loader, batch_of = workloads.pyg_batches(data, options)
        layers = len(options.fanouts)
        edges, messages = [], []
        for i, item in enumerate(loader):
            if args.max_minibatches and i >= args.max_minibatches:
                break
            batch = batch_of(item)
            _, hop_edges = workloads.pyg_hop_counts(batch, layers)
            edges.append(batch.edge_index.shape[1])
            messages.append([sum(hop_edges[:layers - layer]) for layer in range(layers)])
        rows[system] = (float(np.mean(edges)), np.mean(messages, axis=0).round().astype(int))
    return rows


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("data", type=Path, help="a bulkgnn native dataset directory")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--epochs", type=int, default=4)
    parser.add_argument("--fanouts", default="15,10,5")
    parser.add_argument("--batch-size", type=int, default=1024)
    parser.add_argument("--max-minibatches", type=int, default=0,
                        help="per epoch (0: all); the times are then of capped epochs")
    args = parser.parse_args()

    results = {name: [] for name in CONFIGURATIONS}
    with tempfile.TemporaryDirectory() as tmp:
        shim = no_mallopt_shim(tmp)
        for round_ in range(args.rounds):
            names = list(CONFIGURATIONS)
            for name in names[round_ % len(names):] + names[:round_ % len(names)]:
                arguments, without_mallopt = CONFIGURATIONS[name]
                epoch, rss = train_run(arguments, args, shim if without_mallopt else None)
                results[name].append((epoch, rss))
                print(f"  round {round_} {name}: {epoch:.3f} s/epoch, peak RSS {rss:.0f} MiB",
                      flush=True)
    print("\n| configuration | epoch s (median) | peak RSS MiB (median) | over pyg |")
    print("|---|---:|---:|---:|")
    base = statistics.median(rss for _, rss in results["pyg"])
    for name, runs in results.items():
        rss = statistics.median(r for _, r in runs)
        print(f"| {name} | {statistics.median(e for e, _ in runs):.3f} | {rss:.0f} | "
              f"{rss - base:+.0f} |")
    # Last, in this process: the data it reads would otherwise stay resident beside the runs.
    for system, (edges, messages) in messages_per_layer(args).items():
        print(f"{system}: {edges:.0f} edges per minibatch, messages per layer "
              f"{', '.join(map(str, messages))}")


if __name__ == "__main__":
    main()
