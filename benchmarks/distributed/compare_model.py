#!/usr/bin/env python3
"""Measured MPI traffic vs the closed-form cost model (`bulkgnn model`).

Runs `mpirun -np P bulkgnn sample DATA --grid 1.5d` (sampling bytes) and
`mpirun -np P bulkgnn train DATA --feature-replication C` (feature and
gradient bytes) for each P, then `bulkgnn model DATA` with the same settings,
and prints bytes sent summed over ranks, measured vs predicted.

  python3 benchmarks/distributed/compare_model.py --bin build-model/tools/bulkgnn \
      --sample-data /tmp/rmat16 --train-data /tmp/rmat16f --ranks 2,4
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile

MPIRUN = ["mpirun", "--allow-run-as-root", "--oversubscribe", "-np"]


def find(obj, key):
    if isinstance(obj, dict):
        if key in obj:
            return obj[key]
        for v in obj.values():
            r = find(v, key)
            if r is not None:
                return r
    elif isinstance(obj, list):
        for v in obj:
            r = find(v, key)
            if r is not None:
                return r
    return None


def measured(path, stage):
    with open(path) as f:
        by_rank = find(json.load(f), "traffic_by_rank")
    return sum(r.get(stage, {}).get("bytes_sent", 0) for r in by_rank)


def predicted(args, data, ranks, grid, replication, extra):
    with tempfile.NamedTemporaryFile(suffix=".json", delete=False) as f:
        out = f.name
    cmd = [args.bin, "model", data, "--grid", grid, "--replication", str(replication),
           "--ranks", str(ranks), "--fanouts", args.fanouts, "--batch-size", str(args.batch_size),
           "--bulk", str(args.bulk), "--metrics-out", out] + extra
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
    with open(out) as f:
        rows = json.load(f)["predictions"]
    os.unlink(out)
    return rows[0]


def run(cmd):
    print("$", " ".join(cmd), file=sys.stderr)
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)


def line(name, p, meas, pred):
    err = (pred - meas) / meas * 100 if meas else float("nan")
    print(f"{name:<10} {p:>3} {meas / 1e6:>14.4f} {pred / 1e6:>14.4f} {err:>+8.1f}%")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", default="build-model/tools/bulkgnn")
    ap.add_argument("--sample-data", required=True)
    ap.add_argument("--train-data", required=True)
    ap.add_argument("--ranks", default="2,4")
    ap.add_argument("--fanouts", default="15,10,5")
    ap.add_argument("--batch-size", type=int, default=1024)
    ap.add_argument("--bulk", type=int, default=4)
    ap.add_argument("--replication", type=int, default=1)
    ap.add_argument("--feature-replication", type=int, default=1)
    ap.add_argument("--hidden", type=int, default=256)
    ap.add_argument("--max-minibatches", type=int, default=8, help="train only")
    ap.add_argument("--threads", type=int, default=1)
    args = ap.parse_args()
    tmp = tempfile.mkdtemp(prefix="compare-model-")
    common = ["--fanouts", args.fanouts, "--batch-size", str(args.batch_size),
              "--threads", str(args.threads), "--quiet"]
    print(f"{'stage':<10} {'P':>3} {'measured MB':>14} {'predicted MB':>14} {'error':>9}")
    for p in [int(x) for x in args.ranks.split(",")]:
        sm = os.path.join(tmp, f"sample-{p}.json")
        run(MPIRUN + [str(p), args.bin, "sample", args.sample_data, "--grid", "1.5d",
                      "--replication", str(args.replication), "--bulk", str(args.bulk),
                      "--metrics-out", sm] + common)
        pred = predicted(args, args.sample_data, p, "1.5d", args.replication, [])
        line("sampling", p, measured(sm, "sampling"), pred["sampling_bytes_sent"])
        tm = os.path.join(tmp, f"train-{p}.json")
        run(MPIRUN + [str(p), args.bin, "train", args.train_data, "--epochs", "1",
                      "--feature-replication", str(args.feature_replication),
                      "--hidden", str(args.hidden),
                      "--max-minibatches", str(args.max_minibatches), "--metrics-out", tm] + common)
        pred = predicted(args, args.train_data, p, "replicated", 1,
                         ["--max-minibatches", str(args.max_minibatches),
                          "--feature-replication", str(args.feature_replication),
                          "--hidden", str(args.hidden)])
        line("features", p, measured(tm, "features"), pred["features_bytes_sent"])
        line("gradients", p, measured(tm, "gradients"), pred["gradients_bytes_sent"])


if __name__ == "__main__":
    main()
