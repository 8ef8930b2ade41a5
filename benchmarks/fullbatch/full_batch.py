#!/usr/bin/env python3
"""Full-batch training benchmarks (issue 17), each a subcommand:

  accuracy       GCN and GraphSAGE, 5 seeds, the process alone against every
                 grid (P = 4; 8 for 3D) on the real datasets
  communication  bytes per epoch of each grid on R-MAT against the closed
                 forms, and the time per epoch
  memory         peak resident memory per rank of SAR against 1D at P = 1..8
  compression    test accuracy against total bytes sent: none, fixed rates
                 and the variable schedule, at P = 4 (with a PNG plot)

Each writes JSON and a Markdown table under --out. Datasets are converted
once to the native format in --cache (outside the project).
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

MPIRUN = ["mpirun", "--allow-run-as-root", "--oversubscribe", "-x", "OMP_NUM_THREADS=1"]


def native(cli, cache, name, source):
    """DATA converted to the native format once (fast to open in every run)."""
    target = Path(cache) / f"native-{name}"
    if not (target / "manifest.json").exists():
        subprocess.run([cli, "convert", "--quiet", str(source), str(target)], check=True)
    return target


def train(cli, ranks, data, extra):
    """Metrics of one full-batch run on `ranks` MPI ranks (0: alone)."""
    with tempfile.TemporaryDirectory() as scratch:
        metrics = Path(scratch) / "metrics.json"
        command = (MPIRUN + ["-np", str(ranks)] if ranks > 0 else []) + [
            cli, "train", str(data), "--mode", "full-batch", "--quiet",
            "--metrics-out", str(metrics)] + extra
        done = subprocess.run(command, capture_output=True, text=True)
        if done.returncode != 0:
            sys.exit(f"failed: {' '.join(command)}\n{done.stdout}{done.stderr}")
        return json.loads(metrics.read_text())


def mean_std(values):
    return statistics.mean(values), (statistics.stdev(values) if len(values) > 1 else 0.0)


def write(out, name, record, table):
    out.mkdir(parents=True, exist_ok=True)
    (out / f"{name}.json").write_text(json.dumps(record, indent=2) + "\n")
    (out / f"{name}.md").write_text(table + "\n")
    print(table)


ACCURACY_LAYOUTS = [("alone", 0, []), ("1d", 4, ["--grid", "1d"]),
                    ("1.5d c=2", 4, ["--grid", "1.5d", "--replication", "2"]),
                    ("2d", 4, ["--grid", "2d"]), ("3d c=2", 8, ["--grid", "3d", "--replication", "2"]),
                    ("sar (metis)", 4, ["--grid", "sar", "--partition", "metis"])]


def training_args(dataset, epochs):
    """GCN's usual full-batch setting: lr 0.01, weight decay 5e-4, hidden 64; row
    normalisation only for cora (Kipf and Welling's Planetoid setting): it slows
    amazon-photo's binary features down and coauthor-cs's are SVD components."""
    return (["--epochs", str(epochs), "--hidden", "64", "--lr", "0.01", "--weight-decay",
             "5e-4", "--eval-every", "5", "--threads", "1"] +
            (["--normalize-features", "row"] if dataset == "cora" else []))


def accuracy(args):
    results = []
    for dataset in args.datasets:
        data = native(args.cli, args.cache, dataset, Path(args.shared) / dataset)
        for model in ("gcn", "sage"):
            for layout, ranks, grid in ACCURACY_LAYOUTS:
                tests = []
                for seed in range(args.seeds):
                    m = train(args.cli, ranks, data, training_args(dataset, args.epochs) + grid +
                              ["--model", model, "--seed", str(seed)])
                    tests.append(m["final"]["test_acc"])
                mean, std = mean_std(tests)
                results.append({"dataset": dataset, "model": model, "layout": layout,
                                "ranks": max(ranks, 1), "test_acc": tests, "mean": mean,
                                "std": std})
                print(f"{dataset} {model} {layout}: {mean:.4f} ± {std:.4f}", flush=True)
    rows = ["| dataset | model | " + " | ".join(l for l, _, _ in ACCURACY_LAYOUTS) + " |",
            "|---|---|" + "---|" * len(ACCURACY_LAYOUTS)]
    for dataset in args.datasets:
        for model in ("gcn", "sage"):
            cells = [f"{r['mean']:.4f} ± {r['std']:.4f}" for r in results
                     if r["dataset"] == dataset and r["model"] == model]
            rows.append(f"| {dataset} | {model} | " + " | ".join(cells) + " |")
    write(Path(args.out), "accuracy-" + "-".join(args.datasets), {"epochs": args.epochs, "seeds": args.seeds,
                                       "results": results}, "\n".join(rows))


COMMUNICATION_LAYOUTS = [(2, "1d", []), (4, "1d", []), (8, "1d", []),
                         (2, "1.5d", ["--replication", "2"]), (4, "1.5d", ["--replication", "2"]),
                         (8, "1.5d", ["--replication", "2"]), (4, "2d", []),
                         (8, "3d", ["--replication", "2"])]


def communication(args):
    results = []
    for scale in args.scales:
        data = Path(args.cache) / f"rmat-s{scale}-e16-u-f128-c32"
        if not (data / "manifest.json").exists():
            subprocess.run([args.cli, "generate", "rmat", str(data), "--scale", str(scale),
                            "--edge-factor", "16", "--undirected", "--features", "128",
                            "--classes", "32", "--quiet"], check=True)
        for ranks, grid, extra in COMMUNICATION_LAYOUTS:
            m = train(args.cli, ranks, data,
                      ["--grid", grid, "--epochs", "3", "--hidden", "128", "--eval-every", "0",
                       "--threads", "1"] + extra)
            last = m["epochs"][-1]
            record = {"scale": scale, "ranks": ranks, "grid": grid + (" c=2" if extra else ""),
                      "seconds_per_epoch": statistics.mean(e["seconds"] for e in m["epochs"][1:])}
            for stage in ("forward", "backward", "gradients"):
                record[stage] = last["traffic_bytes"][stage]
                record[stage + "_closed_form"] = m["predicted_epoch_bytes"][stage]
            results.append(record)
            print(record, flush=True)
            write_communication(Path(args.out), results)


def write_communication(out, results):
    """The table so far (written after every run: the s20 runs are long)."""
    rows = ["| R-MAT | P | grid | forward MB (closed form) | backward MB (closed form) | "
            "gradients MB (closed form) | s/epoch |", "|---|---|---|---|---|---|---|"]
    for r in results:
        cells = [f"{r[s] / 1e6:.1f} ({r[s + '_closed_form'] / 1e6:.1f}, "
                 + (f"{100 * (r[s] / r[s + '_closed_form'] - 1):+.1f}%)"
                    if r[s + "_closed_form"] > 0 else ("exact)" if r[s] == 0 else "n/a)"))
                 for s in ("forward", "backward", "gradients")]
        rows.append(f"| s{r['scale']} | {r['ranks']} | {r['grid']} | " + " | ".join(cells) +
                    f" | {r['seconds_per_epoch']:.2f} |")
    write(out, "communication", {"results": results}, "\n".join(rows))


def memory(args):
    data = Path(args.cache) / f"rmat-s{args.scales[-1]}-e16-u-f128-c32"
    results = []
    for ranks in (1, 2, 4, 8):
        for grid in ("sar", "1d"):
            m = train(args.cli, ranks if ranks > 1 else 0, data,
                      ["--grid", grid, "--epochs", "1", "--hidden", "128", "--eval-every", "1",
                       "--threads", "1"])
            last = m["epochs"][-1]
            results.append({"ranks": ranks, "grid": grid,
                            "peak_resident_bytes": last["peak_resident_bytes"],
                            "peak_private_bytes": max(last["peak_private_bytes_by_rank"]),
                            "aggregation_peak_bytes": last["aggregation_peak_bytes"],
                            "test_acc": last["test_acc"]})
            print(results[-1], flush=True)
    rows = ["| P | SAR peak RSS per rank MiB (private) | 1D peak RSS per rank MiB (private) | "
            "SAR grid MiB | 1D grid MiB | test acc SAR / 1D |", "|---|---|---|---|---|---|"]
    for ranks in (1, 2, 4, 8):
        sar = next(r for r in results if r["ranks"] == ranks and r["grid"] == "sar")
        one = next(r for r in results if r["ranks"] == ranks and r["grid"] == "1d")
        rows.append(f"| {ranks} | {sar['peak_resident_bytes'] / 2**20:.0f} "
                    f"({sar['peak_private_bytes'] / 2**20:.0f}) | "
                    f"{one['peak_resident_bytes'] / 2**20:.0f} "
                    f"({one['peak_private_bytes'] / 2**20:.0f}) | "
                    f"{sar['aggregation_peak_bytes'] / 2**20:.0f} | "
                    f"{one['aggregation_peak_bytes'] / 2**20:.0f} | "
                    f"{sar['test_acc']:.4f} / {one['test_acc']:.4f} |")
    write(Path(args.out), "memory", {"data": str(data), "results": results}, "\n".join(rows))


def compression(args):
    schedules = ["none", "fixed:2", "fixed:4", "fixed:8", "fixed:16",
                 f"variable:16:{args.epochs // 2}", f"variable:16:{args.epochs}"]
    if args.schedules:
        schedules = args.schedules
    grid_args = ["--grid", args.grid] + (["--partition", "metis"] if args.grid == "sar" else [])
    results = []
    for dataset in args.datasets:
        data = native(args.cli, args.cache, dataset, Path(args.shared) / dataset)
        for schedule in schedules:
            tests, sent = [], []
            for seed in range(args.seeds):
                m = train(args.cli, 4, data,
                          training_args(dataset, args.epochs) + grid_args +
                          ["--compress", schedule, "--seed", str(seed), "--model", "gcn"])
                tests.append(m["final"]["test_acc"])
                sent.append(sum(e["traffic_bytes"]["forward"] + e["traffic_bytes"]["backward"]
                                for e in m["epochs"]))
            mean, std = mean_std(tests)
            results.append({"dataset": dataset, "compress": schedule, "test_acc": tests,
                            "mean": mean, "std": std, "bytes": statistics.mean(sent)})
            print(results[-1], flush=True)
    name = f"compression-{args.grid}-" + "-".join(args.datasets)
    # Runs of other schedules recorded earlier are kept (a sweep can be extended).
    earlier = Path(args.out) / f"{name}.json"
    if earlier.exists():
        ran = {(r["dataset"], r["compress"]) for r in results}
        results = [r for r in json.loads(earlier.read_text())["results"]
                   if (r["dataset"], r["compress"]) not in ran] + results
    rows = ["| dataset | --compress | test acc | activation bytes sent (MB) |", "|---|---|---|---|"]
    for r in results:
        rows.append(f"| {r['dataset']} | {r['compress']} | {r['mean']:.4f} ± {r['std']:.4f} | "
                    f"{r['bytes'] / 1e6:.1f} |")
    write(Path(args.out), name, {"grid": args.grid, "epochs": args.epochs,
                                          "seeds": args.seeds, "results": results},
          "\n".join(rows))
    plot_compression(Path(args.out) / f"{name}.png", results, args.datasets)


def plot_compression(png, results, datasets):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    figure, axes = plt.subplots(1, len(datasets), figsize=(6.5 * len(datasets), 4))
    for axis, dataset in zip(axes if len(datasets) > 1 else [axes], datasets):
        for r in (r for r in results if r["dataset"] == dataset):
            marker = "*" if r["compress"].startswith("variable") else "o"
            axis.errorbar(r["bytes"] / 1e6, r["mean"], yerr=r["std"], fmt=marker, capsize=3,
                          markersize=10 if marker == "*" else 6, label=r["compress"])
        axis.set_xscale("log")
        axis.set_xlabel("activation and gradient bytes sent in training (MB)")
        axis.set_ylabel("test accuracy")
        axis.set_title(f"{dataset}, GCN, P = 4")
        # Beside the axes: inside, it hides points on one dataset or another.
        axis.legend(fontsize=8, loc="center left", bbox_to_anchor=(1.02, 0.5))
    figure.tight_layout()
    figure.savefig(png, dpi=120)


def main():
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("what", choices=["accuracy", "communication", "memory", "compression"])
    parser.add_argument("--cli", default="build/tools/bulkgnn")
    parser.add_argument("--shared", default="../shared/data")
    parser.add_argument("--cache", default="/tmp/bulkgnn-bench-cache")
    parser.add_argument("--out", default="benchmarks/fullbatch/results")
    parser.add_argument("--datasets", nargs="+",
                        default=["cora", "facebook", "amazon-photo", "coauthor-cs"])
    parser.add_argument("--seeds", type=int, default=5)
    parser.add_argument("--epochs", type=int, default=100)
    parser.add_argument("--scales", type=int, nargs="+", default=[18, 20])
    parser.add_argument("--grid", default="1d", help="compression: 1d or sar")
    parser.add_argument("--schedules", nargs="+", help="compression: --compress values to run")
    args = parser.parse_args()
    Path(args.cache).mkdir(parents=True, exist_ok=True)
    {"accuracy": accuracy, "communication": communication, "memory": memory,
     "compression": compression}[args.what](args)


if __name__ == "__main__":
    main()
