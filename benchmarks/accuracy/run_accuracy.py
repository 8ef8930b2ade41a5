#!/usr/bin/env python3
"""Accuracy of `bulkgnn train` on the labelled datasets in ../shared/data.

For each dataset and sampler (node-wise GraphSAGE, LADIES with GCN layers):
  1. pick hyperparameters from a small grid by mean *validation* accuracy
     over two tuning seeds (the test split is never looked at);
  2. train the chosen configuration with 5 fresh seeds and report the test
     accuracy at each run's best validation epoch, mean ± std;
and print a markdown table next to the features-only baselines recorded in
each dataset's meta.json.

  benchmarks/accuracy/run_accuracy.py [--bulkgnn build/tools/bulkgnn]
      [--data ../shared/data] [--out benchmarks/accuracy/results.json]
      [--datasets cora,facebook,...] [--samplers sage,ladies]
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


def train_arguments(data_dir, dataset, sampler, params, seed):
    """The `bulkgnn train` arguments of one run (also printed as its command)."""
    settings = DATASETS[dataset]
    return [
        "train", os.path.join(data_dir, dataset),
        "--split", settings["split"],
        "--sampler", sampler,
        "--fanouts", SAMPLERS[sampler]["fanouts"],
        "--batch-size", str(settings["batch_size"]),
        "--epochs", str(settings["epochs"]),
        "--hidden", str(params["hidden"]),
        "--dropout", str(params["dropout"]),
        "--lr", str(params["lr"]),
        "--weight-decay", str(params["weight_decay"]),
        "--seed", str(seed),
        "--threads", "2",
    ]


def train(bulkgnn, data_dir, dataset, sampler, params, seed):
    with tempfile.TemporaryDirectory() as tmp:
        metrics = os.path.join(tmp, "metrics.json")
        cmd = [bulkgnn] + train_arguments(data_dir, dataset, sampler, params, seed) + [
            "--quiet", "--metrics-out", metrics]
        subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
        with open(metrics) as f:
            final = json.load(f)["final"]
    return final["valid_acc"], final["test_acc"]


def command_line(data_dir, dataset, sampler, params, seed):
    return " ".join(["build/tools/bulkgnn"] +
                    train_arguments(data_dir, dataset, sampler, params, seed))


def tune(args, dataset, sampler):
    best = None
    keys = list(GRID)
    for values in itertools.product(*(GRID[k] for k in keys)):
        params = dict(zip(keys, values))
        valids = [train(args.bulkgnn, args.data, dataset, sampler, params, s)[0]
                  for s in TUNING_SEEDS]
        score = statistics.mean(valids)
        print(f"  tune {dataset} {sampler} {params}: valid {score:.4f}", flush=True)
        if best is None or score > best[0]:
            best = (score, params)
    return best[1]


def baselines(data_dir, dataset):
    with open(os.path.join(data_dir, dataset, "meta.json")) as f:
        meta = json.load(f)
    split = DATASETS[dataset]["split"]
    b = meta["baselines"][split]
    return {name: b[name]["test_acc"] for name in ("majority_class", "ridge_lstsq", "logreg_gd")}


def main():
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--bulkgnn", default="build/tools/bulkgnn")
    parser.add_argument("--data", default="../shared/data")
    parser.add_argument("--out", default="benchmarks/accuracy/results.json")
    parser.add_argument("--datasets", default=",".join(DATASETS))
    parser.add_argument("--samplers", default=",".join(SAMPLERS))
    args = parser.parse_args()

    results = []
    for dataset in args.datasets.split(","):
        if not os.path.isdir(os.path.join(args.data, dataset)):
            sys.exit(f"run_accuracy: dataset {dataset} not found under {args.data}")
        for sampler in args.samplers.split(","):
            start = time.time()
            params = tune(args, dataset, sampler)
            tests, valids = [], []
            for seed in FINAL_SEEDS:
                valid, test = train(args.bulkgnn, args.data, dataset, sampler, params, seed)
                valids.append(valid)
                tests.append(test)
            results.append({
                "dataset": dataset, "sampler": sampler, "params": params,
                "valid_mean": statistics.mean(valids), "test_mean": statistics.mean(tests),
                "test_std": statistics.stdev(tests), "tests": tests,
                "baselines": baselines(args.data, dataset),
                "command": command_line(args.data, dataset, sampler, params, "S") +
                           "   # S = 0..4",
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

    print("\n| dataset | sampler | test acc (5 seeds) | valid acc | logreg (features only) "
          "| ridge | majority | chosen on valid |")
    print("|---|---|---|---|---|---|---|---|")
    for r in results:
        b = r["baselines"]
        p = r["params"]
        print(f"| {r['dataset']} | {r['sampler']} | {r['test_mean']:.4f} ± {r['test_std']:.4f} "
              f"| {r['valid_mean']:.4f} | {b['logreg_gd']:.3f} | {b['ridge_lstsq']:.3f} "
              f"| {b['majority_class']:.3f} | lr {p['lr']}, wd {p['weight_decay']}, "
              f"hidden {p['hidden']}, dropout {p['dropout']} |")
    print("\ncommands:")
    for r in results:
        print(f"  {r['command']}")


if __name__ == "__main__":
    main()
