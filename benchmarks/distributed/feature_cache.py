#!/usr/bin/env python3
"""Feature bytes per epoch against the size of the hot-vertex feature cache.

For each dataset, cache size (a share of the vertices, as rows of 4·f bytes per
rank) and cache choice it runs

  mpirun -np P bulkgnn train DATA --epochs E --feature-cache MIB --feature-cache-choice C

with features partitioned over all P ranks (--feature-replication 1), and reads
from --metrics-out, per epoch, the feature stage's bytes sent (summed over
ranks) and the cache's hit rate and bytes not sent. A cache chosen by access
is empty in the first epoch, so the table reports the last epoch; a refill's
fetch counts in the epoch after it.

  python3 benchmarks/distributed/feature_cache.py --bin build/tools/bulkgnn \\
      --data ../shared/data/facebook /tmp/bulkgnn-bench-cache/rmat-s20-e16-u-f128-c32 \\
      --ranks 4 --shares 0,0.01,0.05,0.2 --out-dir benchmarks/distributed/results/feature-cache
"""
import argparse
import json
import os
import re
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from compare_model import MPIRUN, run  # noqa: E402  (the same mpirun line and command log)


def dataset_size(binary, data):
    """(vertices, feature columns) as `bulkgnn info` prints them."""
    out = subprocess.run([binary, "info", data], check=True, stdout=subprocess.PIPE,
                         text=True).stdout
    nodes = int(re.search(r"^nodes\s+(\d+)", out, re.M).group(1))
    features = int(re.search(r"^features\s+(\d+)", out, re.M).group(1))
    return nodes, features


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--bin", default="build/tools/bulkgnn")
    ap.add_argument("--data", nargs="+", required=True)
    ap.add_argument("--ranks", type=int, default=4)
    ap.add_argument("--shares", default="0,0.01,0.05,0.2",
                    help="cache sizes as shares of the vertices (rows per rank)")
    ap.add_argument("--choices", default="degree,access-each-epoch")
    ap.add_argument("--epochs", type=int, default=2)
    ap.add_argument("--max-minibatches", type=int, default=0, help="per epoch (0: all)")
    ap.add_argument("--fanouts", default="15,10,5")
    ap.add_argument("--batch-size", type=int, default=1024)
    ap.add_argument("--hidden", type=int, default=64)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--out-dir", default=None)
    args = ap.parse_args()

    out_dir = args.out_dir or tempfile.mkdtemp(prefix="feature-cache-")
    runs = os.path.join(out_dir, "runs")
    os.makedirs(runs, exist_ok=True)
    log = os.path.join(runs, "commands.log")
    shares = [float(x) for x in args.shares.split(",")]
    choices = args.choices.split(",")

    rows = []
    for data in args.data:
        name = os.path.basename(os.path.normpath(data))
        nodes, features = dataset_size(args.bin, data)
        for share in shares:
            for choice in (choices if share > 0 else ["-"]):
                mib = share * nodes * 4 * features / 2**20
                metrics = os.path.join(runs, f"{name}-{share}-{choice}.json")
                cmd = MPIRUN + [str(args.ranks), args.bin, "train", data,
                                "--epochs", str(args.epochs), "--eval-every", "0",
                                "--fanouts", args.fanouts, "--batch-size", str(args.batch_size),
                                "--hidden", str(args.hidden), "--threads", str(args.threads),
                                "--max-minibatches", str(args.max_minibatches),
                                "--feature-cache", f"{mib:.6f}", "--quiet",
                                "--metrics-out", metrics]
                if choice != "-":
                    cmd += ["--feature-cache-choice", choice]
                run(cmd, log)
                with open(metrics) as f:
                    m = json.load(f)
                last = m["epochs"][-1]
                cache = last.get("feature_cache") or {}
                row = {"data": name, "share": share, "choice": choice, "mib": mib,
                       "features_bytes": last["traffic"]["features"]["bytes_sent"],
                       "hit_rate": cache.get("hit_rate", 0.0),
                       "bytes_saved": cache.get("bytes_saved", 0),
                       "loss": last.get("loss")}
                rows.append(row)
                print(f"{name} {share:.0%} {choice}: {row['features_bytes'] / 1e6:.1f} MB, "
                      f"hit rate {row['hit_rate']:.1%}", flush=True)

    lines = [f"P = {args.ranks}, features partitioned over all ranks, fanouts {args.fanouts}, "
             f"batch {args.batch_size}; the last of {args.epochs} epochs "
             f"({'every' if args.max_minibatches == 0 else args.max_minibatches} minibatches).",
             "",
             "| data | cache (share of vertices) | MiB per rank | choice | feature MB sent | "
             "vs no cache | hit rate | MB not sent | training loss |",
             "|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        base = next(x for x in rows if x["data"] == r["data"] and x["share"] == 0)
        ratio = r["features_bytes"] / base["features_bytes"] if base["features_bytes"] else 0
        lines.append(f"| {r['data']} | {r['share']:.0%} | {r['mib']:.2f} | {r['choice']} | "
                     f"{r['features_bytes'] / 1e6:.1f} | {ratio:.2f} | {r['hit_rate']:.1%} | "
                     f"{r['bytes_saved'] / 1e6:.1f} | {r['loss']} |")
    with open(os.path.join(out_dir, "table.md"), "w") as f:
        f.write("\n".join(lines) + "\n")
    with open(os.path.join(out_dir, "runs.json"), "w") as f:
        json.dump(rows, f, indent=1)
    print("\n".join(lines))


if __name__ == "__main__":
    main()
