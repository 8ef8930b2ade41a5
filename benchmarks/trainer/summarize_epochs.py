#!/usr/bin/env python3
"""Markdown tables from the metrics files run_epoch_bench.sh wrote into DIR."""

import glob
import json
import os
import sys


def load(path):
    with open(path) as f:
        return json.load(f)


def max_rss_mib(time_file):
    if not os.path.exists(time_file):
        return float("nan")
    with open(time_file) as f:
        for line in f:
            if "Maximum resident set size" in line:
                return int(line.split(":")[1]) / 1024
    return float("nan")


def epoch_rows(out_dir):
    print("| run | epoch | minibatches | epoch s | shuffle | sample | gather | train step "
          "| slowest | epoch / slowest busy | GEMM GFLOP/s | peak RSS MiB | valid | test |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    for name in ("facebook", "facebook-ladies", "rmat", "rmat-ladies"):
        path = os.path.join(out_dir, name + ".json")
        if not os.path.exists(path):
            continue
        m = load(path)
        for e in m["epochs"]:
            s = e["stages"]
            busy = {k: s[k]["busy"] for k in s}
            slowest = max(busy, key=busy.get)
            acc = lambda v: "-" if v is None else f"{v:.4f}"
            print(f"| {name} | {e['epoch'] + 1} | {s['consume']['items']} | {e['seconds']:.2f} "
                  f"| {busy['shuffle']:.3f} | {busy['sample']:.2f} | {busy['gather']:.2f} "
                  f"| {busy['consume']:.2f} | {slowest} | {e['overlap_ratio']:.3f} "
                  f"| {e['gemm_gflops']:.1f} | {e['peak_resident_bytes'] / 2**20:.0f} "
                  f"| {acc(e['valid_acc'])} | {acc(e['test_acc'])} |")


def memory_rows(out_dir):
    print("\n| bulk | ready queue | bulk queue | peak RSS in the epoch MiB | process max RSS MiB "
          "| epoch s |")
    print("|---|---|---|---|---|---|")
    for path in sorted(glob.glob(os.path.join(out_dir, "mem-*.json"))):
        m = load(path)
        c = m["config"]
        e = m["epochs"][0]
        time_file = path[:-len(".json")] + ".time"
        print(f"| {c['bulk']} | {c['ready_queue']} | {c['bulk_queue']} "
              f"| {e['peak_resident_bytes'] / 2**20:.0f} | {max_rss_mib(time_file):.0f} "
              f"| {e['seconds']:.2f} |")


def main():
    out_dir = sys.argv[1] if len(sys.argv) > 1 else "/tmp/bulkgnn-epoch-bench"
    epoch_rows(out_dir)
    memory_rows(out_dir)
    for name in ("facebook", "rmat"):
        path = os.path.join(out_dir, f"gemm-{name}.md")
        if os.path.exists(path):
            print(f"\nGEMM shapes of the train step ({name}):\n")
            with open(path) as f:
                sys.stdout.write(f.read())


if __name__ == "__main__":
    main()
