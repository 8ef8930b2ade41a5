#!/usr/bin/env python3
"""The Python loader against the C++ loader, side by side: for each
(dataset, fanouts, batch) it alternates the C++ consumer
(build/benchmarks/loader_throughput), the Python loop taking tensors and the
Python loop building PyG's layout (benchmarks/python/loader_throughput.py),
`--repeats` rounds, and prints the medians, their ratios, the date, the
machine's CPU and its load average before and after, as one Markdown table:

    PYTHONPATH=build/python python3 benchmarks/python/compare_loaders.py \\
        [--data ../shared/data] [--repeats 5] [--epochs 10] [--out table.md]

Run it on an idle machine: the ratios come from alternated runs, but single
runs spread widely under load (the load average is printed to show it).
"""

import argparse
import datetime
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
CONFIGS = [("facebook", "15,10,5", 1024), ("facebook", "10,10", 512),
           ("coauthor-cs", "15,10,5", 1024)]


def cpu_model():
    with open("/proc/cpuinfo") as f:
        for line in f:
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    return "unknown CPU"


def load_average():
    return os.getloadavg()[0]


def rate(command):
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "r.json"
        subprocess.run([*command, "--json-out", str(out)], check=True, stdout=subprocess.DEVNULL)
        return json.loads(out.read_text())["minibatches_per_second"]


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, default=REPO.parent / "shared" / "data")
    parser.add_argument("--cli-bench", type=Path,
                        default=REPO / "build" / "benchmarks" / "loader_throughput")
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--epochs", type=int, default=10)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()
    python_bench = REPO / "benchmarks" / "python" / "loader_throughput.py"
    load_before = load_average()
    rows = []
    for dataset, fanouts, batch in CONFIGS:
        common = [str(args.data / dataset), "--fanouts", fanouts, "--batch-size", str(batch),
                  "--epochs", str(args.epochs), "--threads", str(args.threads)]
        rates = {"cpp": [], "tensors": [], "pyg": []}
        for _ in range(args.repeats):
            rates["cpp"].append(rate([str(args.cli_bench), *common]))
            rates["tensors"].append(rate([sys.executable, str(python_bench), *common]))
            rates["pyg"].append(rate([sys.executable, str(python_bench), *common, "--pyg"]))
        median = {k: statistics.median(v) for k, v in rates.items()}
        rows.append(f"| {dataset} | {fanouts}, batch {batch} | {median['cpp']:.1f} | "
                    f"{median['tensors']:.1f} | {median['pyg']:.1f} | "
                    f"{median['tensors'] / median['cpp']:.2f} | "
                    f"{median['pyg'] / median['cpp']:.2f} |")
        print(rows[-1], flush=True)
    table = "\n".join([
        f"Measured {datetime.date.today()} on {cpu_model()}, {os.cpu_count()} cores; load "
        f"average {load_before:.2f} before, {load_average():.2f} after; median of "
        f"{args.repeats} alternated rounds of {args.epochs} epochs, {args.threads} threads.",
        "",
        "| dataset | config | C++ loader | Python, tensors | Python, PyG layout | "
        "tensors ÷ C++ | PyG layout ÷ C++ |",
        "|---|---|---|---|---|---|---|",
        *rows])
    print()
    print(table)
    if args.out:
        args.out.write_text(table + "\n")


if __name__ == "__main__":
    main()
