#!/usr/bin/env python3
"""Accuracy of `bulkgnn train` on the labelled datasets in ../shared/data.

For each dataset and sampler (node-wise GraphSAGE, LADIES with GCN layers):
  1. pick hyperparameters from a small grid by mean *validation* accuracy
     over two tuning seeds (the test split is never looked at);
  2. train the chosen configuration with 5 fresh seeds and report the test
     accuracy at each run's best validation epoch, mean ± std;
and print a markdown table next to the features-only baselines recorded in
each dataset's meta.json (where it has them).

A dataset is a name under --data or a path to any dataset directory (OGB raw
or native); its split is --split, else the first one it lists. Settings for
the datasets in ../shared/data are below; any other gets DEFAULT_SETTINGS.

  benchmarks/accuracy/run_accuracy.py [--bulkgnn build/tools/bulkgnn]
      [--data ../shared/data] [--out benchmarks/accuracy/results.json]
      [--datasets cora,facebook,PATH,...] [--split NAME] [--samplers sage,ladies]
      [--normalize-features none|row] [--seeds 0,1,2,3,4]
      [--fixed lr=0.01,weight_decay=0.0005,dropout=0.5,hidden=128]
      [--params-from RESULTS.json] [--device cpu|cuda]

--params-from skips the tuning for every (dataset, sampler) that RESULTS.json
has and trains its chosen settings, printing its test accuracy beside the new
one ("same runs" where every seed's accuracy is the same): the GPU table next
to the CPU one (benchmarks/README.md says where the datasets come from there).

  benchmarks/accuracy/run_accuracy.py --bulkgnn build-gpu-check/tools/bulkgnn \\
      --device cuda --params-from benchmarks/accuracy/results.json \\
      --data build-gpu-check/accuracy-data --out $OUT/accuracy-gpu.json
"""

import argparse
import itertools
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

# Per dataset: the split, the shared settings and the grid searched on valid.
DEFAULT_SETTINGS = {"batch_size": 512, "epochs": 30}
DATASETS = {
    "cora": {"split": "public", "batch_size": 64, "epochs": 60},
    "facebook": {"split": "random-60-20-20", "batch_size": 512, "epochs": 30},
    "amazon-photo": {"split": "random-60-20-20", "batch_size": 512, "epochs": 40},
    "coauthor-cs": {"split": "random-60-20-20", "batch_size": 512, "epochs": 30},
}
SAMPLERS = {
    "sage": {"fanouts": "10,10"},
    "ladies": {"fanouts": "512,512"},
}
GRID = {
    "lr": [0.01, 0.003],
    "weight_decay": [0.0, 5e-4],
    "dropout": [0.5],
    "hidden": [128],
}
TUNING_SEEDS = [100, 101]
FINAL_SEEDS = [0, 1, 2, 3, 4]


def dataset_dir(data_root, dataset):
    """A name under data_root, or a path to a dataset directory."""
    under_root = os.path.join(data_root, dataset)
    return under_root if os.path.isdir(under_root) else dataset


def splits_of(directory):
    """The split names a dataset lists: meta.json's (OGB raw) or manifest.json's
    (native), else the folders under split/."""
    for name in ("meta.json", "manifest.json"):
        path = os.path.join(directory, name)
        if os.path.exists(path):
            with open(path) as f:
                splits = json.load(f).get("splits", [])
            names = [s if isinstance(s, str) else s.get("name") for s in splits]
            if names:
                return names
    split_dir = os.path.join(directory, "split")
    return sorted(os.listdir(split_dir)) if os.path.isdir(split_dir) else []


def settings_of(args, dataset):
    """The split, batch size and epochs for one dataset."""
    directory = dataset_dir(args.data, dataset)
    settings = dict(DATASETS.get(os.path.basename(os.path.normpath(dataset)), DEFAULT_SETTINGS))
    splits = splits_of(directory)
    if args.split:
        settings["split"] = args.split
    elif "split" not in settings:
        if not splits:
            sys.exit(f"run_accuracy: {directory} lists no split; give --split")
        settings["split"] = splits[0]
    settings["dir"] = directory
    return settings


def train_arguments(args, settings, sampler, params, seed):
    """The `bulkgnn train` arguments of one run (also printed as its command)."""
    return [
        "train", settings["dir"],
        "--split", settings["split"],
        "--sampler", sampler,
        "--fanouts", SAMPLERS[sampler]["fanouts"],
        "--batch-size", str(settings["batch_size"]),
        "--epochs", str(settings["epochs"]),
        "--hidden", str(params["hidden"]),
        "--dropout", str(params["dropout"]),
        "--lr", str(params["lr"]),
        "--weight-decay", str(params["weight_decay"]),
        "--normalize-features", args.normalize_features,
        "--seed", str(seed),
        "--threads", "2",
        "--device", args.device,
        *(["--gemm", args.gemm] if args.device == "cuda" else []),
    ]


def train(args, settings, sampler, params, seed):
    with tempfile.TemporaryDirectory() as tmp:
        metrics = os.path.join(tmp, "metrics.json")
        cmd = [args.bulkgnn] + train_arguments(args, settings, sampler, params, seed) + [
            "--quiet", "--metrics-out", metrics]
        subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
        with open(metrics) as f:
            final = json.load(f)["final"]
    return final["valid_acc"], final["test_acc"]


def command_line(args, settings, sampler, params, seed):
    return " ".join(["build/tools/bulkgnn"] +
                    train_arguments(args, settings, sampler, params, seed))


def earlier_result(args, dataset, sampler):
    """--params-from's result for this dataset (by name) and sampler, or None."""
    name = os.path.basename(os.path.normpath(dataset))
    return next((r for r in args.params_from
                 if os.path.basename(os.path.normpath(r["dataset"])) == name and
                 r["sampler"] == sampler), None)


def tune(args, settings, sampler, earlier):
    if args.fixed:
        return args.fixed
    if earlier is not None:
        return earlier["params"]
    best = None
    keys = list(GRID)
    for values in itertools.product(*(GRID[k] for k in keys)):
        params = dict(zip(keys, values))
        valids = [train(args, settings, sampler, params, s)[0] for s in TUNING_SEEDS]
        score = statistics.mean(valids)
        print(f"  tune {settings['dir']} {sampler} {params}: valid {score:.4f}", flush=True)
        if best is None or score > best[0]:
            best = (score, params)
    return best[1]


def baselines(settings):
    """meta.json's features-only baselines for the split; None where it has none."""
    path = os.path.join(settings["dir"], "meta.json")
    if not os.path.exists(path):
        return None
    with open(path) as f:
        b = json.load(f).get("baselines", {}).get(settings["split"])
    if not b:
        return None
    return {name: b[name]["test_acc"] for name in ("majority_class", "ridge_lstsq", "logreg_gd")}


def parse_fixed(text):
    """"lr=0.01,weight_decay=0,dropout=0.5,hidden=128" -> the params of one run."""
    params = {}
    for item in text.split(","):
        key, _, value = item.partition("=")
        if key not in GRID:
            sys.exit(f"run_accuracy: --fixed: unknown setting '{key}' (known: {', '.join(GRID)})")
        params[key] = int(value) if key == "hidden" else float(value)
    missing = set(GRID) - set(params)
    if missing:
        sys.exit(f"run_accuracy: --fixed lacks {', '.join(sorted(missing))}")
    return params


def load_results(path):
    with open(path) as f:
        return json.load(f)


def baseline_cells(b):
    if b is None:
        return "- | - | -"
    return f"{b['logreg_gd']:.3f} | {b['ridge_lstsq']:.3f} | {b['majority_class']:.3f}"


def main():
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--bulkgnn", default="build/tools/bulkgnn")
    parser.add_argument("--data", default="../shared/data")
    parser.add_argument("--out", default="benchmarks/accuracy/results.json")
    parser.add_argument("--datasets", default=",".join(DATASETS))
    parser.add_argument("--split", help="split of every dataset (default: its first)")
    parser.add_argument("--samplers", default=",".join(SAMPLERS))
    parser.add_argument("--normalize-features", default="none", choices=["none", "row"])
    parser.add_argument("--seeds", default=",".join(map(str, FINAL_SEEDS)),
                        help="seeds of the final runs")
    parser.add_argument("--fixed", type=parse_fixed,
                        help="skip the tuning: lr=...,weight_decay=...,dropout=...,hidden=...")
    parser.add_argument("--params-from", type=load_results, default=[],
                        help="skip the tuning where this results file chose settings")
    parser.add_argument("--device", default="cpu", choices=["cpu", "cuda"],
                        help="where bulkgnn trains")
    parser.add_argument("--gemm", default="exact", choices=["exact", "fast"],
                        help="with --device cuda: exact GEMMs (the CPU's runs, bit for bit) or "
                             "fast (cuBLAS)")
    args = parser.parse_args()
    seeds = [int(s) for s in args.seeds.split(",")]

    results = []
    for dataset in args.datasets.split(","):
        if not os.path.isdir(dataset_dir(args.data, dataset)):
            sys.exit(f"run_accuracy: dataset {dataset} not found under {args.data} nor as a path")
        settings = settings_of(args, dataset)
        for sampler in args.samplers.split(","):
            start = time.time()
            earlier = earlier_result(args, dataset, sampler)
            params = tune(args, settings, sampler, earlier)
            tests, valids = [], []
            for seed in seeds:
                valid, test = train(args, settings, sampler, params, seed)
                valids.append(valid)
                tests.append(test)
            results.append({
                "dataset": dataset, "split": settings["split"], "sampler": sampler,
                "device": args.device,
                "gemm": args.gemm if args.device == "cuda" else "exact",
                "earlier_test_mean": earlier["test_mean"] if earlier else None,
                "earlier_tests": earlier["tests"] if earlier else None,
                "normalize_features": args.normalize_features, "params": params,
                "valid_mean": statistics.mean(valids), "test_mean": statistics.mean(tests),
                "test_std": statistics.stdev(tests) if len(tests) > 1 else 0.0, "tests": tests,
                "baselines": baselines(settings),
                "command": command_line(args, settings, sampler, params, "S") +
                           f"   # S in {args.seeds}",
                "seconds": time.time() - start,
            })
            r = results[-1]
            print(f"{dataset} {sampler}: test {r['test_mean']:.4f} ± {r['test_std']:.4f} "
                  f"(valid {r['valid_mean']:.4f}) with {params}", flush=True)

    os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)
    tmp = args.out + ".tmp"
    with open(tmp, "w") as f:
        json.dump(results, f, indent=2)
    os.replace(tmp, args.out)

    print(f"\n| dataset | sampler | test acc ({len(seeds)} seeds, {args.device}) | earlier "
          "| valid acc | logreg (features only) | ridge | majority | settings |")
    print("|---|---|---|---|---|---|---|---|---|")
    for r in results:
        p = r["params"]
        earlier = ("-" if r["earlier_test_mean"] is None else
                   f"{r['earlier_test_mean']:.4f}" +
                   (" (same runs)" if r["earlier_tests"] == r["tests"] else ""))
        print(f"| {r['dataset']} | {r['sampler']} | {r['test_mean']:.4f} ± {r['test_std']:.4f} "
              f"| {earlier} | {r['valid_mean']:.4f} | {baseline_cells(r['baselines'])} "
              f"| lr {p['lr']}, wd {p['weight_decay']}, hidden {p['hidden']}, "
              f"dropout {p['dropout']}, normalize {r['normalize_features']} |")
    print("\ncommands:")
    for r in results:
        print(f"  {r['command']}")


if __name__ == "__main__":
    main()
