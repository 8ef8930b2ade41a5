"""Plots and the README table of the side-by-side run, from its CSV alone.

  python benchmarks/peers/report.py --csv benchmarks/peers/results/measurements.csv

Writes next to the CSV: throughput.png (minibatches/s per system, per workload and
dataset), epoch_time.png and accuracy.png (end to end), summary.md (the table); with a
suffix for measurements-SUFFIX.csv (e.g. summary-quick.md, throughput-quick.png); and
replaces the part of benchmarks/README.md between the peers markers with summary.md
(unless --no-readme). Rates are medians over repetitions; ratios are bulkgnn's rate over
the peer's (above 1: bulkgnn faster), for the loader also bulkgnn's Python loop's rate
over the peer's, and for training the epoch time of the same PyG (or DGL) model fed by
the peer's loader over the one fed by bulkgnn's Python loader; epoch time is the median over every epoch but the
first of each run; accuracy is the mean ± std over seeds of the test accuracy at the best
validation epoch.
"""

import argparse
import csv
import statistics
from collections import defaultdict
from importlib import metadata
from pathlib import Path

HERE = Path(__file__).resolve().parent
README = HERE.parent / "README.md"
BEGIN, END = "<!-- peers:begin -->", "<!-- peers:end -->"
SYSTEMS = ["bulkgnn", "bulkgnn-py", "bulkgnn-py-dgl", "pyg", "pyg-w2", "dgl", "dgl-w2",
           "ladies-ref"]
SYSTEM_NAMES = {"bulkgnn": "bulkgnn", "bulkgnn-py": "bulkgnn in Python (to_pyg)",
                "bulkgnn-py-dgl": "bulkgnn in Python (to_dgl)", "pyg": "PyG",
                "pyg-w2": "PyG, 2 workers", "dgl": "DGL", "dgl-w2": "DGL, 2 workers",
                "ladies-ref": "LADIES (numpy/scipy port)"}
COLORS = {"bulkgnn": "tab:blue", "bulkgnn-py": "tab:cyan", "bulkgnn-py-dgl": "tab:purple",
          "pyg": "tab:orange", "pyg-w2": "gold", "dgl": "tab:green", "dgl-w2": "olivedrab",
          "ladies-ref": "tab:gray"}
DATASETS = ["cora", "facebook", "slashdot", "rmat"]


def read_rows(path):
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def group(rows, metric):
    """{(workload, dataset, config, system): [values]} for one metric."""
    out = defaultdict(list)
    for r in rows:
        if r["metric"] == metric:
            out[(r["workload"], r["dataset"], r["config"], r["system"])].append(
                (r["epoch"], r["repetition"], float(r["value"])))
    return out


def median_rate(values):
    return statistics.median(v for _, _, v in values)


def median_epoch_seconds(values):
    """Median over every epoch except each run's first (warm-up: page cache, allocator)."""
    later = [v for epoch, _, v in values if epoch not in ("", "0")]
    return statistics.median(later or [v for _, _, v in values])


def versions():
    names = ["torch", "torch-geometric", "torch-sparse", "torch-scatter", "dgl", "numpy",
             "scipy"]
    found = []
    for name in names:
        try:
            found.append(f"{name} {metadata.version(name)}")
        except metadata.PackageNotFoundError:
            pass
    return ", ".join(found)


def fmt_rate(value):
    if value >= 1e6:
        return f"{value / 1e6:.2f} M"
    if value >= 1e3:
        return f"{value / 1e3:.1f} k"
    return f"{value:.1f}"


def throughput_table(rows, workload):
    per_second = group(rows, "minibatches_per_second")
    edges = group(rows, "edges_per_second")
    feature_bytes = group(rows, "feature_bytes_per_second")
    edges_total = group(rows, "sampled_edges")
    minibatches_total = group(rows, "minibatches")
    configs = sorted({k[2] for k in per_second if k[0] == workload},
                     key=lambda c: (c.startswith("ladies"), c))
    columns = ["dataset", "config", "system", "minibatches/s", "sampled edges/s",
               "edges per minibatch"]
    if workload == "loader":
        columns.append("feature GB/s")
    columns.append("bulkgnn ÷ system (minibatches/s)")
    python_base = workload == "loader"
    if python_base:
        columns.append("bulkgnn in Python ÷ system")
    lines = ["| " + " | ".join(columns) + " |", "|" + "---|" * len(columns)]
    for config in configs:
        for dataset in DATASETS:
            base_key = (workload, dataset, config, "bulkgnn")
            if base_key not in per_second:
                continue
            base = median_rate(per_second[base_key])
            python_key = (workload, dataset, config, "bulkgnn-py")
            python_rate = median_rate(per_second[python_key]) if python_key in per_second \
                else None
            for system in SYSTEMS:
                key = (workload, dataset, config, system)
                if key not in per_second:
                    continue
                rate = median_rate(per_second[key])
                per_minibatch = sum(v for _, _, v in edges_total[key]) / max(
                    sum(v for _, _, v in minibatches_total[key]), 1)
                cells = [dataset, config, SYSTEM_NAMES[system], f"{rate:.1f}",
                         fmt_rate(median_rate(edges[key])), f"{per_minibatch:,.0f}"]
                if workload == "loader":
                    cells.append(f"{median_rate(feature_bytes[key]) / 1e9:.2f}")
                cells.append("—" if system == "bulkgnn" else f"**{base / rate:.2f}×**")
                if python_base:
                    cells.append("—" if python_rate is None or system.startswith("bulkgnn")
                                 else f"**{python_rate / rate:.2f}×**")
                lines.append("| " + " | ".join(cells) + " |")
    return lines


def train_table(rows):
    """Epoch time and accuracy per system. Two ratios: against bulkgnn's own trainer,
    and the same Python model fed by another loader against it fed by bulkgnn's Python
    loader (PyG's model: to_pyg; DGL's model: to_dgl)."""
    seconds = group(rows, "epoch_seconds")
    accuracy = group(rows, "test_acc")
    same_model_base = {"pyg": "bulkgnn-py", "pyg-w2": "bulkgnn-py", "dgl": "bulkgnn-py-dgl"}
    lines = ["| dataset | config | system | median epoch s | system ÷ bulkgnn (epoch time) "
             "| same model: system ÷ bulkgnn's Python loader "
             "| test acc (mean ± std, seeds) | bulkgnn − system (points) |",
             "|---|---|---|---|---|---|---|---|"]
    for dataset in DATASETS:
        for key in sorted(k for k in seconds if k[0] == "train" and k[1] == dataset
                          and k[3] == "bulkgnn"):
            _, _, config, _ = key
            base = median_epoch_seconds(seconds[key])
            base_acc = [v for _, _, v in accuracy.get(key, [])]
            for system in SYSTEMS:
                k = ("train", dataset, config, system)
                if k not in seconds:
                    continue
                epoch = median_epoch_seconds(seconds[k])
                acc = [v for _, _, v in accuracy.get(k, [])]
                acc_cell = (f"{statistics.mean(acc):.4f} ± {statistics.pstdev(acc):.4f} "
                            f"({len(acc)})") if acc else "— (random labels)"
                gap = (f"{100 * (statistics.mean(base_acc) - statistics.mean(acc)):+.2f}"
                       if acc and base_acc and system != "bulkgnn" else "—")
                model_key = ("train", dataset, config, same_model_base.get(system, ""))
                same_model = (f"**{epoch / median_epoch_seconds(seconds[model_key]):.2f}×**"
                              if model_key in seconds else "—")
                lines.append(f"| {dataset} | {config} | {SYSTEM_NAMES[system]} | {epoch:.3f} | "
                             + ("—" if system == "bulkgnn" else f"**{epoch / base:.2f}×**")
                             + f" | {same_model} | {acc_cell} | {gap} |")
    return lines


def plots(rows, out_dir, suffix=""):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    colors = COLORS
    per_second = group(rows, "minibatches_per_second")
    panels = sorted({(k[0], k[2]) for k in per_second},
                    key=lambda p: (p[0] != "sample", p[1].startswith("ladies"), p[1]))
    if panels:
        fig, axes = plt.subplots(1, len(panels), figsize=(4.2 * len(panels), 4), squeeze=False)
        for ax, (workload, config) in zip(axes[0], panels):
            systems = [s for s in SYSTEMS
                       if any(k[0] == workload and k[2] == config and k[3] == s
                              for k in per_second)]
            width = 0.8 / len(systems)
            for i, system in enumerate(systems):
                xs, ys = [], []
                for j, dataset in enumerate(DATASETS):
                    key = (workload, dataset, config, system)
                    if key in per_second:
                        xs.append(j + i * width)
                        ys.append(median_rate(per_second[key]))
                ax.bar(xs, ys, width, label=SYSTEM_NAMES[system], color=colors[system])
            ax.set_xticks([j + 0.4 - width / 2 for j in range(len(DATASETS))], DATASETS)
            ax.set_yscale("log")
            ax.set_title(f"{workload}: {config}", fontsize=10)
            ax.set_ylabel("minibatches/s (median)")
            ax.legend(fontsize=8)
        fig.tight_layout()
        fig.savefig(out_dir / f"throughput{suffix}.png", dpi=110)
        plt.close(fig)

    seconds = group(rows, "epoch_seconds")
    accuracy = group(rows, "test_acc")
    for name, data, ylabel, log_scale in (
            ("epoch_time.png", seconds, "median epoch seconds", True),
            ("accuracy.png", accuracy, "test accuracy (mean ± std over seeds)", False)):
        keys = [k for k in data if k[0] == "train"]
        if not keys:
            continue
        datasets = [d for d in DATASETS if any(k[1] == d for k in keys)]
        fig, ax = plt.subplots(figsize=(6, 4))
        trained = [s for s in SYSTEMS if any(k[3] == s for k in keys)]
        width = 0.8 / len(trained)
        for i, system in enumerate(trained):
            xs, ys, errs = [], [], []
            for j, dataset in enumerate(datasets):
                matching = [k for k in keys if k[1] == dataset and k[3] == system]
                if not matching:
                    continue
                values = data[matching[0]]
                xs.append(j + i * width)
                if name == "epoch_time.png":
                    ys.append(median_epoch_seconds(values))
                    errs.append(0)
                else:
                    vals = [v for _, _, v in values]
                    ys.append(statistics.mean(vals))
                    errs.append(statistics.pstdev(vals))
            ax.bar(xs, ys, width, yerr=errs if any(errs) else None, label=SYSTEM_NAMES[system],
                   color=colors[system])
        ax.set_xticks([j + 0.4 - width / 2 for j in range(len(datasets))], datasets)
        if log_scale:
            ax.set_yscale("log")
        else:
            ax.set_ylim(0, 1)
        ax.set_ylabel(ylabel)
        ax.set_title("GraphSAGE end to end")
        ax.legend(fontsize=8)
        fig.tight_layout()
        fig.savefig(out_dir / name.replace(".png", f"{suffix}.png"), dpi=110)
        plt.close(fig)


def summary(rows, csv_path):
    run_ids = sorted({r["run_id"] for r in rows})
    mode = rows[0]["mode"] if rows else "?"
    pyg_backends = sorted({r["sampler_backend"] for r in rows if r["system"] == "pyg"})
    busy = [float(r["busy_before"]) for r in rows if r.get("busy_before")]
    load_note = (f" The machine is shared: each measurement waited up to 3 s for other "
                 f"processes to use under 25% of the CPUs; the share busy just before a "
                 f"measurement had median {100 * statistics.median(busy):.0f}% and maximum "
                 f"{100 * max(busy):.0f}% (column `busy_before`)." if busy else "")
    invocations = sorted({r.get("invocation") or "benchmarks/peers/run.sh" for r in rows})
    command = "`, `".join(invocations)
    rel_csv = csv_path.resolve().relative_to(HERE.parent.parent) \
        if csv_path.resolve().is_relative_to(HERE.parent.parent) else csv_path
    lines = [
        f"Produced by `{command}` (run {', '.join(run_ids)}, mode {mode}); every number "
        f"below is a median over the repetitions in `{rel_csv}`, tables by "
        f"`python benchmarks/peers/report.py --csv {rel_csv}`. Peer versions: {versions()}. "
        f"PyG's NeighborLoader sampled with: {', '.join(pyg_backends) or '—'}. "
        "2 threads for every system (bulkgnn `--threads 2`, `torch.set_num_threads(2)`, "
        "`OMP_NUM_THREADS=2`); PyG's and DGL's loaders with `num_workers=0` unless the "
        "system says 2 workers (`persistent_workers=True`). \"bulkgnn\" is the C++ "
        "loader and trainer; \"bulkgnn in Python\" is `bulkgnn.NeighborLoader` in a Python "
        "loop, each minibatch converted by `mb.to_pyg()` (or `mb.to_dgl()`), training the "
        "same PyG (DGL) model as the PyG (DGL) rows. PyG's model trims each layer with "
        "`trim_to_layer` whichever loader feeds it (PyG's loader samples with torch-sparse, "
        "which returns no per-hop counts; they are recovered from the batch's layout, and "
        "`check_adapters.py` checks that trimming leaves the seeds' outputs unchanged)."
        + load_note,
        "",
        "![throughput](peers/results/throughput.png) "
        "![epoch time](peers/results/epoch_time.png) "
        "![accuracy](peers/results/accuracy.png)",
        "",
        "### Sampling only",
        "",
        *throughput_table(rows, "sample"),
        "",
        "### Loader: sampling plus feature gather",
        "",
        *throughput_table(rows, "loader"),
        "",
        "### End to end: GraphSAGE training",
        "",
        *train_table(rows),
    ]
    return "\n".join(lines) + "\n"


def main():
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--csv", type=Path, default=HERE / "results" / "measurements.csv")
    parser.add_argument("--no-readme", action="store_true",
                        help="do not touch benchmarks/README.md")
    args = parser.parse_args()
    rows = read_rows(args.csv)
    out_dir = args.csv.parent
    # measurements-quick.csv gives summary-quick.md and throughput-quick.png, ...
    suffix = args.csv.stem.removeprefix("measurements")
    plots(rows, out_dir, suffix)
    text = summary(rows, args.csv)
    stem = args.csv.stem.replace("measurements", "summary")
    (out_dir / f"{stem}.md").write_text(text)
    if not args.no_readme:
        readme = README.read_text()
        if BEGIN not in readme:
            raise SystemExit(f"{README} has no {BEGIN} ... {END} markers")
        head, rest = readme.split(BEGIN, 1)
        _, tail = rest.split(END, 1)
        README.write_text(head + BEGIN + "\n" + text + END + tail)
    print(text)


if __name__ == "__main__":
    main()
