#!/usr/bin/env python3
"""Sampling bytes and time of layer-wise samplers (LADIES, FastGCN) on a sharded graph.

For each sampler, rank count P and grid, runs `bulkgnn sample` under mpirun with the
rows cut to each rank's columns at their owners (--draw-at owner) and fetched whole
by every rank (--draw-at requester), next to the replicated run, and checks that
every run printed the single-process digest. Bytes are those the sampling stage sent
in the epoch, summed over the ranks (FastGCN's distribution, computed at the first
hop, included).

    python3 benchmarks/distributed/layer_wise_bytes.py --bin build/tools/bulkgnn \\
        --data /tmp/bulkgnn-bench-cache/rmat-s20-e16 --ranks 1,2,4,8 \\
        --out-dir benchmarks/distributed/results/layer-wise-bytes
"""
import argparse
import csv
import json
import math
import os
import subprocess
import sys
import tempfile
import time


def run_sample(args, sampler, ranks, grid, draw_at, metrics):
    command = [args.bin, "sample", args.data, "--sampler", sampler,
               "--fanouts", args.fanouts, "--batch-size", str(args.batch_size),
               "--bulk", str(args.bulk), "--max-minibatches", str(args.max_minibatches),
               "--threads", "1", "--quiet", "--metrics-out", metrics]
    if grid:
        command += ["--grid"] + grid.split()
    if draw_at:
        command += ["--draw-at", draw_at]
    if ranks > 0:
        command = ["mpirun", "--allow-run-as-root", "--oversubscribe", "-np", str(ranks),
                   "--bind-to", "none"] + command
    start = time.monotonic()
    result = subprocess.run(command, capture_output=True, text=True)
    seconds = time.monotonic() - start
    if result.returncode != 0:
        sys.exit(f"failed ({result.returncode}): {' '.join(command)}\n{result.stdout}"
                 f"{result.stderr}")
    with open(metrics) as f:
        m = json.load(f)
    sent = 0
    if m.get("distributed"):
        for epoch in m["traffic_by_epoch"]:
            sent += epoch["sampling"]["bytes_sent"]
        sent += m["distributed"]["setup_traffic"]["sampling"]["bytes_sent"]
    return {"digest": m["digest"], "bytes": sent, "seconds": round(seconds, 2),
            "sampling_seconds": round(m.get("seconds", seconds), 2)}


def predicted_bytes(args, sampler, ranks, grid, draw_at, metrics):
    """The cost model's sampling bytes (`bulkgnn model`) for the same run."""
    command = [args.bin, "model", args.data, "--sampler", sampler, "--fanouts", args.fanouts,
               "--batch-size", str(args.batch_size), "--bulk", str(args.bulk),
               "--max-minibatches", str(args.max_minibatches), "--grid"] + grid.split() + [
               "--ranks", str(ranks), "--draw-at", draw_at or "owner",
               "--metrics-out", metrics]
    result = subprocess.run(command, capture_output=True, text=True)
    if result.returncode != 0:
        sys.exit(f"failed ({result.returncode}): {' '.join(command)}\n{result.stderr}")
    with open(metrics) as f:
        rows = json.load(f)["predictions"]
    return rows[0]["sampling_bytes_sent"] if rows else float("nan")


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--bin", default="build/tools/bulkgnn")
    ap.add_argument("--data", required=True)
    ap.add_argument("--ranks", default="1,2,4,8")
    ap.add_argument("--samplers", default="ladies,fastgcn")
    ap.add_argument("--grids", default="replicated,1.5d,2d,3d:2",
                    help="grids to run where P allows them (3d:C: C layers)")
    ap.add_argument("--fanouts", default="512,512")
    ap.add_argument("--batch-size", type=int, default=1024)
    ap.add_argument("--bulk", type=int, default=8)
    ap.add_argument("--max-minibatches", type=int, default=64)
    ap.add_argument("--out-dir", required=True)
    args = ap.parse_args()
    os.makedirs(args.out_dir, exist_ok=True)
    rows = []
    with tempfile.TemporaryDirectory() as scratch:
        metrics = os.path.join(scratch, "m.json")
        for sampler in args.samplers.split(","):
            alone = run_sample(args, sampler, 0, "", "", metrics)
            rows.append({"sampler": sampler, "ranks": 1, "grid": "alone", "draw_at": "-",
                         **alone, "predicted_bytes": 0})
            print(rows[-1], flush=True)
            for ranks in [int(r) for r in args.ranks.split(",")]:
                layouts = []
                for grid in args.grids.split(","):
                    if grid == "replicated":
                        layouts.append(("replicated", ""))
                        continue
                    name, _, layers = grid.partition(":")
                    side = math.isqrt(ranks // int(layers or 1))
                    if ranks == 1 or (name != "1.5d" and (ranks % int(layers or 1) or
                                                        side * side * int(layers or 1) != ranks)):
                        continue
                    spelled = name + (f" --replication {layers}" if layers else "")
                    layouts += [(spelled, d) for d in ("owner", "requester")]
                for grid, draw_at in layouts:
                    got = run_sample(args, sampler, ranks, grid, draw_at, metrics)
                    if got["digest"] != alone["digest"]:
                        sys.exit(f"{sampler} P={ranks} {grid} {draw_at}: digest "
                                 f"{got['digest']} differs from {alone['digest']}")
                    predicted = predicted_bytes(args, sampler, ranks, grid, draw_at, metrics)
                    rows.append({"sampler": sampler, "ranks": ranks, "grid": grid,
                                 "draw_at": draw_at or "-", **got,
                                 "predicted_bytes": round(predicted)})
                    print(rows[-1], flush=True)
    with open(os.path.join(args.out_dir, "layer-wise-bytes.csv"), "w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=list(rows[0].keys()))
        writer.writeheader()
        writer.writerows(rows)
    lines = ["| sampler | P | grid | draw at | sampling MB | predicted MB | error | time s |",
             "|---|---|---|---|---|---|---|---|"]
    for r in rows:
        error = ("exact" if r["bytes"] == r["predicted_bytes"] else
                 f"{100 * (r['predicted_bytes'] / r['bytes'] - 1):+.1f}%" if r["bytes"] else "-")
        lines.append(f"| {r['sampler']} | {r['ranks']} | {r['grid']} | {r['draw_at']} | "
                     f"{r['bytes'] / 1e6:.2f} | {r['predicted_bytes'] / 1e6:.2f} | {error} | "
                     f"{r['seconds']} |")
    with open(os.path.join(args.out_dir, "layer-wise-bytes.md"), "w") as f:
        f.write("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
