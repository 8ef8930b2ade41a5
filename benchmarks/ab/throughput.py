#!/usr/bin/env python3
"""Side-by-side throughput of two bulkgnn binaries: sampling, the loader-fed
training epoch, and a data-parallel layer-wise epoch under mpirun.

Runs each job on the old and the new binary alternately, `--rounds` times, so
that both see the same machine load, and prints per job the median of the
new/old ratio of the rounds' times (below 1: the new binary is faster), with
the smallest and largest ratio. Noise on a shared machine is what the spread
shows; compare medians only where the spread is narrow.

    benchmarks/ab/throughput.py --old /path/to/old/bulkgnn --new build/tools/bulkgnn \
        --data ../shared/data [--rounds 5] [--json out.json]
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile


def jobs(data):
    def d(name):
        return os.path.join(data, name)
    yield "sample slashdot sage t2", None, ["sample", d("soc-slashdot0902"), "--epochs", "2",
                                              "--threads", "2"], "sample"
    yield "sample coauthor-cs ladies t2", None, ["sample", d("coauthor-cs"), "--sampler",
                                                   "ladies", "--fanouts", "512,512",
                                                   "--batch-size", "256", "--threads", "2"], "sample"
    yield "train coauthor-cs sage t2 (epoch)", None, ["train", d("coauthor-cs"), "--epochs", "3",
                                                       "--fanouts", "15,10", "--hidden", "256",
                                                       "--eval-every", "0", "--threads", "2"], "train"
    yield "train facebook ladies t2 (epoch)", None, ["train", d("facebook"), "--epochs", "3",
                                                      "--sampler", "ladies", "--fanouts", "512,512",
                                                      "--eval-every", "0", "--threads", "2"], "train"
    yield "mpi2 train facebook ladies t1 (epoch)", 2, ["train", d("facebook"), "--epochs", "3",
                                                        "--sampler", "ladies", "--fanouts",
                                                        "512,512", "--eval-every", "0",
                                                        "--threads", "1"], "train"


def run(binary, ranks, args, kind, workdir):
    metrics = os.path.join(workdir, "m.json")
    command = [binary] + args + ["--quiet", "--metrics-out", metrics]
    if ranks:
        command = ["mpirun", "--allow-run-as-root", "--oversubscribe", "-np", str(ranks)] + command
    done = subprocess.run(command, capture_output=True, text=True)
    if done.returncode != 0:
        sys.exit(f"{' '.join(command)} failed:\n{done.stderr[-2000:]}")
    with open(metrics) as f:
        m = json.load(f)
    if kind == "sample":
        return m["seconds"]
    # The first epoch warms caches and pools; the rest are steady state.
    return statistics.median(e["seconds"] for e in m["epochs"][1:])


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--old", required=True)
    parser.add_argument("--new", required=True)
    parser.add_argument("--data", required=True)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--json")
    o = parser.parse_args()
    results = []
    with tempfile.TemporaryDirectory() as workdir:
        for name, ranks, args, kind in jobs(os.path.abspath(o.data)):
            old, new = [], []
            for _ in range(o.rounds):
                old.append(run(os.path.abspath(o.old), ranks, args, kind, workdir))
                new.append(run(os.path.abspath(o.new), ranks, args, kind, workdir))
            ratios = sorted(n / x for n, x in zip(new, old))
            row = {"job": name, "old_median_s": statistics.median(old),
                   "new_median_s": statistics.median(new),
                   "ratio_median": statistics.median(ratios), "ratio_min": ratios[0],
                   "ratio_max": ratios[-1]}
            results.append(row)
            print(f"{name:<40} old {row['old_median_s']:.4g} s  new {row['new_median_s']:.4g} s  "
                  f"new/old {row['ratio_median']:.3f} [{ratios[0]:.3f}, {ratios[-1]:.3f}]",
                  flush=True)
    if o.json:
        with open(o.json, "w") as f:
            json.dump(results, f, indent=2)


if __name__ == "__main__":
    main()
