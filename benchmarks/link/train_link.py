#!/usr/bin/env python3
"""Link prediction with `bulkgnn train --task link` on the shared datasets:
Hits@50 and MRR over seeds, each seed its own random link split.

    benchmarks/link/train_link.py [--bulkgnn build/tools/bulkgnn] [--data ../shared/data]
        [--datasets cora,facebook,coauthor-cs,amazon-photo] [--heads dot,mlp]
        [--seeds 0,1,2,3,4] [--out benchmarks/link/results.json]

Protocol, as benchmarks/python/link_prediction.py (PyG's link_pred example, OGB's
collab evaluator) so that the two tables compare:
- split 70/10/20 of the undirected edges (PyG's RandomLinkSplit), one fixed
  negative per valid and test positive, none an edge of the graph;
- training minibatches: 512 positives of the training edges and as many uniform
  negatives, fanouts 10,10 over the training graph, each minibatch's positives
  left out of its own blocks (--exclude reverse);
- model: two GraphSAGE layers, hidden 128, no dropout, Adam lr 0.01; the dot
  head (PyG's example) or the MLP head (OGB's LinkPredictor);
- evaluation after every epoch over the whole graph: Hits@50 against the pool of
  fixed negatives, MRR against 100 corrupted tails per positive (ogbl-citation2's
  protocol); the test numbers at the epoch of the best valid Hits@50.
soc-slashdot0902 has no node features: the model learns a 64-wide embedding per vertex
(--node-embedding 64). (An earlier table's soc-slashdot0902-f128 was it with 128 standard
normal features, numpy default_rng(0), as benchmarks/peers/run_peers.py builds it.)
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile

EPOCHS = {"cora": 20, "facebook": 10, "coauthor-cs": 10, "amazon-photo": 10}
DEFAULT_EPOCHS = 5  # any other dataset (a name under --data or a path)
# amazon-photo's 745 binary features sum to dot products that overflow the loss in the
# first steps (loss 17, then every score equal): rows normalised as PyG's
# NormalizeFeatures, as its node-classification examples do.
DATASET_OPTIONS = {"amazon-photo": ["--normalize-features", "row"],
                   "soc-slashdot0902": ["--node-embedding", "64"]}
COMMON = ["--task", "link", "--fanouts", "10,10", "--hidden", "128", "--batch-size", "512",
          "--lr", "0.01", "--dropout", "0", "--hits-k", "50", "--ranking-negatives", "100",
          "--quiet"]


def run_one(args, dataset, head, seed):
    with tempfile.TemporaryDirectory() as tmp:
        metrics = os.path.join(tmp, "metrics.json")
        command = [args.bulkgnn, "train", os.path.join(args.data, dataset), *COMMON,
                   "--link-head", head, "--epochs", str(epochs_of(dataset)), "--seed", str(seed),
                   "--metrics-out", metrics,
                   *DATASET_OPTIONS.get(os.path.basename(os.path.normpath(dataset)), []),
                   *args.extra.split()]
        done = subprocess.run(command, capture_output=True, text=True)
        if done.returncode != 0:
            sys.exit(f"{' '.join(command)} failed:\n{done.stdout}{done.stderr}")
        with open(metrics) as f:
            record = json.load(f)
    final = record["final"]
    epochs = record["epochs"]
    return {"seed": seed,
            "best_epoch": final["best_epoch"],
            "test_hits@50": final["test_hits@50"],
            "test_mrr": final["test_mrr"],
            "valid_hits@50": final["valid_hits@50"],
            "seconds_per_epoch": statistics.median(e["seconds"] for e in epochs),
            "eval_seconds": statistics.median(e["eval_seconds"] for e in epochs)}


def epochs_of(dataset):
    return EPOCHS.get(os.path.basename(os.path.normpath(dataset)), DEFAULT_EPOCHS)


def mean_std(values):
    return statistics.mean(values), (statistics.stdev(values) if len(values) > 1 else 0.0)


def main():
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--bulkgnn", default="build/tools/bulkgnn")
    parser.add_argument("--data", default="../shared/data")
    parser.add_argument("--datasets", default="cora,facebook,coauthor-cs,amazon-photo",
                        help="names under --data, or paths")
    parser.add_argument("--heads", default="dot,mlp")
    parser.add_argument("--seeds", default="0,1,2,3,4")
    parser.add_argument("--out", default="benchmarks/link/results.json")
    parser.add_argument("--extra", default="", help="more train options, as one string")
    args = parser.parse_args()
    seeds = [int(s) for s in args.seeds.split(",")]
    results = []
    print("| dataset | head | epochs | test Hits@50 | test MRR (100 tails) | s/epoch | eval s |")
    print("|---|---|---|---|---|---|---|")
    for dataset in args.datasets.split(","):
        for head in args.heads.split(","):
            runs = [run_one(args, dataset, head, seed) for seed in seeds]
            hits = mean_std([r["test_hits@50"] for r in runs])
            mrr = mean_std([r["test_mrr"] for r in runs])
            seconds = statistics.median(r["seconds_per_epoch"] for r in runs)
            eval_seconds = statistics.median(r["eval_seconds"] for r in runs)
            print(f"| {os.path.basename(os.path.normpath(dataset))} | {head} | "
                  f"{epochs_of(dataset)} | {hits[0]:.3f} ± {hits[1]:.3f} | "
                  f"{mrr[0]:.3f} ± {mrr[1]:.3f} | {seconds:.2f} | {eval_seconds:.2f} |",
                  flush=True)
            results.append({"dataset": dataset, "head": head, "epochs": epochs_of(dataset),
                            "options": DATASET_OPTIONS.get(
                                os.path.basename(os.path.normpath(dataset)), []),
                            "runs": runs})
    with open(args.out, "w") as f:
        json.dump({"protocol": COMMON, "results": results}, f, indent=2)
        f.write("\n")


if __name__ == "__main__":
    main()
