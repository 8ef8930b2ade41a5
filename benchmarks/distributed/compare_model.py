#!/usr/bin/env python3
"""Measured MPI traffic and time vs the closed-form cost model (`bulkgnn model`).

For every process grid and rank count it runs

  mpirun -np P bulkgnn sample SAMPLE_DATA --grid G --replication C    (sampling bytes)
  mpirun -np P bulkgnn train TRAIN_DATA --feature-replication C       (feature-fetch bytes)

and `bulkgnn model DATA` with the same settings, and prints bytes sent summed
over ranks, measured next to predicted, with the time: for sampling the
sampling wall time of the run (the CLI's `seconds`, rank 0) and the longest
per-rank time inside the sampling stage's communication; for features the
longest per-rank time inside the feature all-to-alls and rank 0's gather-stage
busy time. Grids run interleaved: repetition r runs every configuration once
before repetition r + 1 starts, so background load hits them alike; the table
reports medians over the repetitions (times also their minimum).

  python3 benchmarks/distributed/compare_model.py --bin build/tools/bulkgnn \\
      --sample-data /tmp/bulkgnn-bench-cache/rmat-s20-e16 \\
      --train-data /tmp/bulkgnn-bench-cache/rmat-s20-e16-u-f128-c32 \\
      --ranks 1,2,4,8 --out-dir benchmarks/distributed/results

Configurations (valid ones only, see rank_grid in core/grid.hpp):
--grids lists GRID[:C] entries (C = --replication: 1.5d copies, 3d layers);
--draw-at lists where 1.5d, 2d and 3d draw node-wise samples (owner, requester:
both side by side measure what drawing at the owner saves);
--feature-replications the feature replication factors. A configuration whose
C does not fit P (2d needs a square P, 3d P/C square, C | P) is skipped.
"""
import argparse
import csv
import datetime
import json
import math
import os
import statistics
import subprocess
import sys
import tempfile
import time

MPIRUN = ["mpirun", "--allow-run-as-root", "--oversubscribe", "-x", "OMP_NUM_THREADS=1", "-np"]


def is_square(n):
    r = round(math.sqrt(n))
    return r * r == n


def valid(grid, ranks, c):
    if c < 1 or ranks % c != 0:
        return False
    if grid == "replicated":
        return c == 1
    if grid == "1.5d":
        return True
    if grid in ("2d", "2d-summa"):
        return c == 1 and is_square(ranks)
    if grid == "3d":
        return is_square(ranks // c)
    raise ValueError(f"unknown grid {grid}")


def parse_grids(spec):
    out = []
    for item in spec.split(","):
        grid, _, c = item.partition(":")
        out.append((grid, int(c) if c else 1))
    return out


def stage_sum(by_rank, stage, key="bytes_sent"):
    return sum(r.get(stage, {}).get(key, 0) for r in by_rank)


def stage_max(by_rank, stage, key="seconds"):
    return max((r.get(stage, {}).get(key, 0) for r in by_rank), default=0)


def run(cmd, log):
    print("$", " ".join(cmd), file=sys.stderr, flush=True)
    start = time.monotonic()
    done = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    with open(log, "a") as f:
        f.write("$ " + " ".join(cmd) + "\n" + done.stdout + "\n")
    if done.returncode != 0:
        sys.stderr.write(done.stdout[-4000:])
        raise SystemExit(f"failed ({done.returncode}): {' '.join(cmd)}")
    return time.monotonic() - start


def model(args, data, grid, c, feature_c, max_minibatches, draw="owner"):
    """Predictions for every P in --ranks: {P: row}."""
    fd, out = tempfile.mkstemp(suffix=".json")
    os.close(fd)
    cmd = [args.bin, "model", data, "--grid", grid, "--replication", str(c), "--draw-at", draw,
           "--feature-replication", str(feature_c), "--ranks", args.ranks,
           "--fanouts", args.fanouts, "--batch-size", str(args.batch_size),
           "--bulk", str(args.bulk), "--hidden", str(args.hidden),
           "--max-minibatches", str(max_minibatches), "--metrics-out", out]
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
    with open(out) as f:
        rows = json.load(f)["predictions"]
    os.unlink(out)
    return {r["ranks"]: r for r in rows}


def draws_for(grid, draws):
    """Where `grid` may draw: 1.5d and 3d either place, the others nowhere else."""
    return draws if grid in ("1.5d", "2d", "3d") else ["-"]


def sample_cmd(args, p, grid, c, draw, metrics):
    return MPIRUN + [str(p), args.bin, "sample", args.sample_data, "--grid", grid,
                     "--replication", str(c), "--partition", args.partition,
                     "--draw-at", "owner" if draw == "-" else draw,
                     "--bulk", str(args.bulk), "--fanouts", args.fanouts,
                     "--batch-size", str(args.batch_size), "--threads", str(args.threads),
                     "--max-minibatches", str(args.sample_max_minibatches), "--quiet",
                     "--metrics-out", metrics]


def train_cmd(args, p, feature_c, metrics):
    return MPIRUN + [str(p), args.bin, "train", args.train_data, "--epochs", "1",
                     "--feature-replication", str(feature_c), "--partition", args.partition,
                     "--fanouts", args.fanouts, "--batch-size", str(args.batch_size),
                     "--hidden", str(args.hidden), "--threads", str(args.threads),
                     "--max-minibatches", str(args.train_max_minibatches), "--eval-every", "0",
                     "--quiet", "--metrics-out", metrics]


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--bin", default="build/tools/bulkgnn")
    ap.add_argument("--sample-data", required=True)
    ap.add_argument("--train-data", required=True)
    ap.add_argument("--ranks", default="1,2,4,8")
    ap.add_argument("--grids", default="replicated,1.5d:1,1.5d:2,2d,2d-summa,3d:1,3d:2",
                    help="GRID[:C] list for sampling; invalid (GRID, P, C) are skipped")
    ap.add_argument("--draw-at", default="owner",
                    help="owner and/or requester (comma-separated): where 1.5d and 3d draw")
    ap.add_argument("--skip", default="",
                    help="GRID:C@P list of sampling configurations not to run (e.g. 2d:1@1: "
                         "CombBLAS's product of a whole bulk on one rank needs > 20 GB)")
    ap.add_argument("--feature-replications", default="1,2",
                    help="feature replication factors; an empty string skips features")
    ap.add_argument("--partition", default="block")
    ap.add_argument("--fanouts", default="15,10,5")
    ap.add_argument("--batch-size", type=int, default=1024)
    ap.add_argument("--bulk", type=int, default=32)
    ap.add_argument("--hidden", type=int, default=256)
    ap.add_argument("--sample-max-minibatches", type=int, default=0,
                    help="minibatches per sampling epoch (0: the whole epoch)")
    ap.add_argument("--train-max-minibatches", type=int, default=8)
    ap.add_argument("--threads", type=int, default=1, help="threads per rank")
    ap.add_argument("--repeats", type=int, default=1)
    ap.add_argument("--out-dir", default=None,
                    help="write measurements.csv, table.md and the runs' JSON and logs here")
    ap.add_argument("--reuse", action="store_true",
                    help="keep the runs already in OUT_DIR/runs (same settings!) and run only "
                         "the missing ones; predictions are always recomputed")
    args = ap.parse_args()

    ranks = [int(x) for x in args.ranks.split(",")]
    grids = parse_grids(args.grids)
    feature_cs = [int(x) for x in args.feature_replications.split(",") if x]
    draws = args.draw_at.split(",")
    out_dir = args.out_dir or tempfile.mkdtemp(prefix="compare-model-")
    runs_dir = os.path.join(out_dir, "runs")
    os.makedirs(runs_dir, exist_ok=True)
    log = os.path.join(runs_dir, "commands.log")

    skip = set()
    for item in (x for x in args.skip.split(",") if x):
        spec, _, p = item.partition("@")
        skip.add(parse_grids(spec)[0] + (int(p),))
    configs = []  # (stage, grid, P, c, draw)
    for p in ranks:
        for grid, c in grids:
            if valid(grid, p, c) and (grid, c, p) not in skip:
                for draw in draws_for(grid, draws):
                    configs.append(("sampling", grid, p, c, draw))
        for fc in feature_cs:
            if p % fc == 0 and (fc < p or fc == 1):
                configs.append(("features", "replicated", p, fc, "-"))

    predictions = {}
    for grid, c, draw in sorted({(g, c, d) for s, g, p, c, d in configs if s == "sampling"}):
        predictions[("sampling", grid, c, draw)] = model(
            args, args.sample_data, grid, c, 1, args.sample_max_minibatches,
            "owner" if draw == "-" else draw)
    for fc in sorted({c for s, g, p, c, d in configs if s == "features"}):
        predictions[("features", "replicated", fc, "-")] = model(
            args, args.train_data, "replicated", 1, fc, args.train_max_minibatches)

    rows = []
    started = datetime.datetime.now(datetime.timezone.utc)
    for rep in range(args.repeats):
        for stage, grid, p, c, draw in configs:
            tag = f"{stage}-{grid}-c{c}-p{p}" + (f"-{draw}" if draw != "-" else "") + f"-r{rep}"
            metrics = os.path.join(runs_dir, tag + ".json")
            cmd = (sample_cmd(args, p, grid, c, draw, metrics) if stage == "sampling" else
                   train_cmd(args, p, c, metrics))
            wall_file = os.path.join(runs_dir, tag + ".wall")
            if args.reuse and os.path.exists(metrics) and os.path.exists(wall_file):
                with open(wall_file) as f:
                    wall, *load = f.read().split()
                wall, load = float(wall), load[0] if load else ""
            else:
                load = f"{os.getloadavg()[0]:.2f}"  # 1-minute load average before the run
                wall = run(cmd, log)
                with open(wall_file, "w") as f:
                    f.write(f"{wall:.3f} {load}\n")
            if stage == "sampling":
                with open(metrics) as f:
                    m = json.load(f)
                by_rank = m["distributed"]["traffic_by_rank"] if m.get("distributed") else []
                pred = predictions[(stage, grid, c, draw)][p]["sampling_bytes_sent"]
                row = {"seconds": m["seconds"], "minibatches": m["minibatches"],
                       "stage_seconds": ""}
            else:
                with open(metrics) as f:
                    m = json.load(f)
                by_rank = m["distributed"]["traffic_by_rank"] if m.get("distributed") else []
                pred = predictions[(stage, grid, c, draw)][p]["features_bytes_sent"]
                epoch = m["epochs"][0]
                row = {"seconds": epoch["seconds"],
                       "minibatches": epoch["stages"].get("consume", {}).get("items", ""),
                       "stage_seconds": epoch["stages"].get("gather", {}).get("busy", "")}
            row.update({"stage": stage, "grid": grid, "ranks": p, "replication": c,
                        "draw_at": draw, "repeat": rep,
                        "measured_bytes": stage_sum(by_rank, stage),
                        "received_bytes": stage_sum(by_rank, stage, "bytes_received"),
                        "calls": stage_sum(by_rank, stage, "calls"),
                        "predicted_bytes": pred,
                        "comm_seconds": stage_max(by_rank, stage),
                        "process_seconds": round(wall, 3), "load_before": load})
            rows.append(row)
            err = ((pred - row["measured_bytes"]) / row["measured_bytes"] * 100
                   if row["measured_bytes"] else float("nan"))
            print(f"{stage:<9} {grid:<10} P={p} c={c} draw {draw} rep {rep}: measured "
                  f"{row['measured_bytes'] / 1e6:.2f} MB, predicted {pred / 1e6:.2f} MB "
                  f"({err:+.1f}%), {row['seconds']:.2f} s", flush=True)

    fields = ["stage", "grid", "ranks", "replication", "draw_at", "repeat", "minibatches", "measured_bytes",
              "received_bytes", "calls", "predicted_bytes", "seconds", "comm_seconds",
              "stage_seconds", "process_seconds", "load_before"]
    with open(os.path.join(out_dir, "measurements.csv"), "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=fields)
        w.writeheader()
        w.writerows(rows)

    lines = table(rows, configs, args, started)
    with open(os.path.join(out_dir, "table.md"), "w") as f:
        f.write("\n".join(lines) + "\n")
    print("\n".join(lines))


def fmt_error(meas, pred):
    if meas == 0:
        return "exact" if pred == 0 else "n/a"
    return f"{(pred - meas) / meas * 100:+.1f}%"


def table(rows, configs, args, started):
    def median(xs):
        xs = [x for x in xs if x != ""]
        return statistics.median(xs) if xs else float("nan")

    lines = [
        f"Run {started:%Y-%m-%d %H:%M} UTC, {args.repeats} repetition(s), medians; "
        f"fanouts {args.fanouts}, batch {args.batch_size}, sampling bulk {args.bulk}, "
        f"{args.threads} thread(s) per rank, partition {args.partition}; sampling "
        + (f"{args.sample_max_minibatches} minibatches" if args.sample_max_minibatches
           else "a whole epoch")
        + f", features {args.train_max_minibatches} minibatches of `train --epochs 1`.",
        "",
        "| stage | grid | P | c | draw at | measured MB | predicted MB | error | time s | "
        "min time s | comm s |",
        "|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for stage, grid, p, c, draw in configs:
        mine = [r for r in rows if (r["stage"], r["grid"], r["ranks"], r["replication"],
                                    r["draw_at"]) == (stage, grid, p, c, draw)]
        meas = median([r["measured_bytes"] for r in mine])
        pred = mine[0]["predicted_bytes"]
        times = [r["seconds"] if stage == "sampling" else r["stage_seconds"] for r in mine]
        secs = median(times)
        fastest = min((t for t in times if t != ""), default=float("nan"))
        comm = median([r["comm_seconds"] for r in mine])
        name = grid if stage == "sampling" else "features"
        lines.append(f"| {stage} | {name} | {p} | {c} | {draw} | {meas / 1e6:.2f} | "
                     f"{pred / 1e6:.2f} | "
                     f"{fmt_error(meas, pred)} | {secs:.2f} | {fastest:.2f} | {comm:.2f} |")
    return lines


if __name__ == "__main__":
    main()
