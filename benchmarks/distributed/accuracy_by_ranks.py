#!/usr/bin/env python3
"""Test accuracy of `mpirun -np P bulkgnn train` next to the 1-process run.

Trains each labelled dataset with the settings chosen in the accuracy table
(benchmarks/accuracy/results.json, README: Accuracy) on 1 process and on P
ranks in several layouts, for the same seeds, and prints a markdown table of
the test accuracy at the best validation epoch (mean ± std) and the largest
per-seed difference from the 1-process run. The global batch and the seed fix
the minibatches, so the runs differ only in the order of float sums.

  python3 benchmarks/distributed/accuracy_by_ranks.py [--bulkgnn build/tools/bulkgnn]
      [--data ../shared/data] [--datasets cora,facebook] [--samplers sage,ladies]
      [--seeds 0,1,2] [--out benchmarks/distributed/accuracy_by_ranks.json]
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "accuracy"))
from run_accuracy import train_arguments  # noqa: E402  (the accuracy table's exact runs)

MPIRUN = ["mpirun", "--allow-run-as-root", "--oversubscribe", "-x", "OMP_NUM_THREADS=1", "-np"]
# (ranks, extra options): the 1-process reference first.
LAYOUTS = [
    (1, []),
    (2, []),
    (4, ["--feature-replication", "2"]),
    (4, ["--grid", "1.5d", "--replication", "2", "--partition", "metis"]),
]


def chosen_params(results_path, dataset, sampler):
    with open(results_path) as f:
        for row in json.load(f):
            if row["dataset"] == dataset and row["sampler"] == sampler:
                return row["params"]
    sys.exit(f"{results_path}: no chosen setting for {dataset}/{sampler}")


def test_accuracy(args, ranks, extra, dataset, sampler, params, seed):
    with tempfile.TemporaryDirectory() as tmp:
        metrics = os.path.join(tmp, "metrics.json")
        # One thread per rank: the ranks share this machine's cores.
        threads = "2" if ranks == 1 else "1"
        cmd = [args.bulkgnn] + train_arguments(args.data, dataset, sampler, params, seed)
        cmd = [threads if i > 0 and cmd[i - 1] == "--threads" else a for i, a in enumerate(cmd)]
        cmd += extra + ["--quiet", "--metrics-out", metrics]
        if ranks > 1:
            cmd = MPIRUN + [str(ranks)] + cmd
        print("$", " ".join(cmd), file=sys.stderr, flush=True)
        subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
        with open(metrics) as f:
            return json.load(f)["final"]["test_acc"]


def main():
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--bulkgnn", default="build/tools/bulkgnn")
    parser.add_argument("--data", default="../shared/data")
    parser.add_argument("--results", default=os.path.join(HERE, "..", "accuracy", "results.json"))
    parser.add_argument("--datasets", default="cora,facebook")
    parser.add_argument("--samplers", default="sage,ladies")
    parser.add_argument("--seeds", default="0,1,2")
    parser.add_argument("--out", default=os.path.join(HERE, "accuracy_by_ranks.json"))
    args = parser.parse_args()
    seeds = [int(s) for s in args.seeds.split(",")]

    rows = []
    for dataset in args.datasets.split(","):
        for sampler in args.samplers.split(","):
            params = chosen_params(args.results, dataset, sampler)
            reference = None
            for ranks, extra in LAYOUTS:
                accs = [test_accuracy(args, ranks, extra, dataset, sampler, params, s)
                        for s in seeds]
                reference = reference or accs
                rows.append({"dataset": dataset, "sampler": sampler, "ranks": ranks,
                             "layout": " ".join(extra) or "replicated", "params": params,
                             "seeds": seeds, "test_acc": accs,
                             "max_diff_vs_1": max(abs(a - b) for a, b in zip(accs, reference))})
    with open(args.out + ".tmp", "w") as f:
        json.dump(rows, f, indent=2)
    os.replace(args.out + ".tmp", args.out)

    print(f"| dataset | sampler | ranks | layout | test acc ({len(seeds)} seeds) "
          "| largest per-seed difference from 1 process |")
    print("|---|---|---|---|---|---|")
    for r in rows:
        accs = r["test_acc"]
        spread = statistics.stdev(accs) if len(accs) > 1 else 0.0
        print(f"| {r['dataset']} | {r['sampler']} | {r['ranks']} | {r['layout']} "
              f"| {statistics.mean(accs):.4f} ± {spread:.4f} "
              f"| {r['max_diff_vs_1'] * 100:.2f} points |")


if __name__ == "__main__":
    main()
