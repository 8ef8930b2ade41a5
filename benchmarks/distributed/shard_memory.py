#!/usr/bin/env python3
"""Peak resident memory per rank: ranks that map the whole dataset vs ranks that read their part.

For each dataset and rank count P it runs, on the 1.5D grid (one copy of each
block row, so P parts):

  bulkgnn partition DATA PARTED --parts P
  mpirun -np P bulkgnn sample DATA   --grid 1.5d ...   (every rank maps and checks all of A)
  mpirun -np P bulkgnn sample PARTED --grid 1.5d ...   (every rank maps its part of A only)

(P = 1 runs without mpirun, --grid replicated.) Each run samples a few bulks,
enough to reach the steady state of the sampler's buffers, and reports every
rank's peak resident set (VmHWM, `peak_resident_bytes_by_rank` in
--metrics-out); the table gives the largest rank's, the topology's share of
it (the part's bytes on disk), and the digest, which must be the same in
every row of a dataset. With --command train the runs train instead (one
epoch of --max-minibatches, features partitioned over the ranks, no
evaluation): the peak is the epoch's, per rank, and the epoch's loss stands
for the digest.

  python3 benchmarks/distributed/shard_memory.py --bin build/tools/bulkgnn \\
      --data /tmp/bulkgnn-bench-cache/rmat-s22-e16 /tmp/bulkgnn-bench-cache/rmat-s24-e16 \\
      --ranks 1,2,4,8 --out-dir benchmarks/distributed/results/shard-memory
"""
import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from compare_model import MPIRUN, run  # noqa: E402  (the same mpirun line and command log)


def directory_bytes(path):
    return sum(os.path.getsize(os.path.join(root, f))
               for root, _, files in os.walk(path) for f in files)


def sample(args, data, ranks, metrics, log):
    """(largest rank's peak bytes, digest or final loss, seconds) of one run."""
    grid = "replicated" if ranks == 1 else "1.5d"
    cmd = ([] if ranks == 1 else MPIRUN + [str(ranks)]) + [
        args.bin, args.command, data, "--grid", grid, "--fanouts", args.fanouts,
        "--batch-size", str(args.batch_size), "--bulk", str(args.bulk),
        "--max-minibatches", str(args.max_minibatches), "--threads", str(args.threads),
        "--quiet", "--metrics-out", metrics]
    if args.command == "train":
        cmd += ["--epochs", "1", "--eval-every", "0", "--hidden", str(args.hidden)]
    seconds = run(cmd, log)
    with open(metrics) as f:
        m = json.load(f)
    outcome = m["digest"] if args.command == "sample" else f"{m['epochs'][-1]['loss']:.6f}"
    return max(m["peak_resident_bytes_by_rank"]), outcome, seconds


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--bin", default="build/tools/bulkgnn")
    ap.add_argument("--data", nargs="+", required=True)
    ap.add_argument("--ranks", default="1,2,4,8")
    ap.add_argument("--command", default="sample", choices=["sample", "train"])
    ap.add_argument("--hidden", type=int, default=64, help="train: hidden width")
    ap.add_argument("--fanouts", default="15,10,5")
    ap.add_argument("--batch-size", type=int, default=1024)
    ap.add_argument("--bulk", type=int, default=4)
    ap.add_argument("--max-minibatches", type=int, default=16)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--scratch", default=None, help="where partitioned copies go (removed after)")
    ap.add_argument("--out-dir", default=None)
    args = ap.parse_args()

    out_dir = args.out_dir or tempfile.mkdtemp(prefix="shard-memory-")
    os.makedirs(out_dir, exist_ok=True)
    log = os.path.join(out_dir, "commands.log")
    scratch = tempfile.mkdtemp(prefix="shard-memory-", dir=args.scratch)
    metrics = os.path.join(scratch, "metrics.json")
    rows = []
    try:
        for data in args.data:
            name = os.path.basename(os.path.normpath(data))
            whole_bytes = directory_bytes(data)
            for ranks in [int(p) for p in args.ranks.split(",")]:
                parted = os.path.join(scratch, f"{name}-{ranks}")
                partition_seconds = run([args.bin, "partition", data, parted, "--parts",
                                         str(ranks), "--quiet"], log)
                part_bytes = max(directory_bytes(os.path.join(parted, f"part-{k}"))
                                 for k in range(ranks))
                whole_peak, whole_digest, _ = sample(args, data, ranks, metrics, log)
                part_peak, part_digest, _ = sample(args, parted, ranks, metrics, log)
                rows.append({"data": name, "ranks": ranks, "whole_bytes": whole_bytes,
                             "part_bytes": part_bytes, "whole_peak": whole_peak,
                             "part_peak": part_peak, "partition_seconds": partition_seconds,
                             "digests_equal": whole_digest == part_digest,
                             "digest": part_digest})
                print(json.dumps(rows[-1]), flush=True)
                shutil.rmtree(parted)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)

    mib = 1 << 20
    lines = ["| data | P | dataset MiB | largest part MiB | peak/rank, whole mapped (MiB) "
             "| peak/rank, own part (MiB) | own part vs P=1 | partition s | digests |",
             "|---|---:|---:|---:|---:|---:|---:|---:|---|"]
    for r in rows:
        first = next(x for x in rows if x["data"] == r["data"] and x["ranks"] == min(
            y["ranks"] for y in rows if y["data"] == r["data"]))
        lines.append(
            f"| {r['data']} | {r['ranks']} | {r['whole_bytes'] / mib:.0f} "
            f"| {r['part_bytes'] / mib:.0f} | {r['whole_peak'] / mib:.0f} "
            f"| {r['part_peak'] / mib:.0f} | {r['part_peak'] / first['part_peak']:.2f} "
            f"| {r['partition_seconds']:.1f} | {'equal' if r['digests_equal'] else 'DIFFER'} |")
    if args.command == "train":
        lines[0] = lines[0].replace("| digests |", "| losses |")
    table = "\n".join(lines) + "\n"
    print(table)
    with open(os.path.join(out_dir, "table.md"), "w") as f:
        f.write(table)
    with open(os.path.join(out_dir, "rows.json"), "w") as f:
        json.dump(rows, f, indent=1)
    if not all(r["digests_equal"] for r in rows):
        raise SystemExit("a partitioned run differs from the whole dataset's")


if __name__ == "__main__":
    main()
