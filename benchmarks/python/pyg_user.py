#!/usr/bin/env python3
"""bulkgnn as a PyG user meets it: the same GraphSAGE script fed by bulkgnn.NeighborLoader
(mb.to_pyg(): system bulkgnn, the loader's defaults; bulkgnn-lean, bulk=4 and prefetch=2)
and by PyG's NeighborLoader with 0 and 2 workers (pyg, pyg-w2), and DGL's script fed by its
own DataLoader (dgl) and by bulkgnn (mb.to_dgl(): bulkgnn-dgl); loader-only and epoch times,
test accuracy over seeds, peak resident memory over the whole run, and a DDP script of 2
processes under torchrun (ddp_shards.py). bulkgnn's loaders are built from the data the
script holds (Dataset.from_pyg of the PyG Data the model trains on), as a user hands it.

    PYTHONPATH=build/python ~/.cache/bulkgnn-peers-venv/bin/python \\
        benchmarks/python/pyg_user.py NATIVE_DIR [--seeds 3] [--epochs 20] [--ddp] [--json OUT]

NATIVE_DIR is a bulkgnn native dataset: `bulkgnn convert ../shared/data/facebook DIR`, or a
products-sized R-MAT, `bulkgnn generate rmat DIR --scale 21 --edge-factor 30 --undirected
--features 100 --classes 47` with `--products-split` (train on a random 8%, as ogbn-products
does; random labels: time and memory only, with --max-minibatches to cap the epochs).

Every run is a process of its own (benchmarks/peers/peer_workloads.py: 15,10,5, batch 1024,
hidden 128, Adam 0.01, dropout 0.5, 2 threads, full-graph evaluation after each epoch), its
peak resident memory read from os.wait4: the largest peak of the process or of any worker
process it waited for, not their sum. Systems alternate per seed.
Epoch time is the median over the epochs after the first (evaluation apart); accuracy is
the test accuracy at the best validation epoch.
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
WORKLOADS = HERE.parent / "peers" / "peer_workloads.py"
DDP = HERE / "ddp_shards.py"
# name: peer_workloads.py's arguments. bulkgnn's loaders are built from the data the script
# holds (--from-memory: the PyG Data, its CSR built from edge_index, features viewed; the
# CSR arrays for DGL's model, viewed), as a user's script hands it over; bulkgnn-lean reads
# ahead less (bulk 4, prefetch 2). bulkgnn-dgl is DGL's model fed by bulkgnn
# (mb.to_dgl()), whose loader is bulkgnn's: it has no loader run.
BULKGNN = ["--from-memory", "--bulk", "32", "--prefetch", "32"]
SYSTEMS = {"bulkgnn": ["--system", "bulkgnn-py", *BULKGNN],
           "bulkgnn-lean": ["--system", "bulkgnn-py", "--from-memory", "--bulk", "4",
                            "--prefetch", "2"],
           "pyg": ["--system", "pyg"], "pyg-w2": ["--system", "pyg", "--workers", "2"],
           "dgl": ["--system", "dgl"], "bulkgnn-dgl": ["--system", "bulkgnn-py-dgl", *BULKGNN]}
TRAIN_ONLY = {"bulkgnn-dgl"}


def run_measured(command, environment=None):
    """Runs `command` (with `environment`: the process's own, if None), returning (its JSON
    output file's content, peak RSS in MiB)."""
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "result.json"
        process = subprocess.Popen([*command, "--json-out", str(out)], stdout=subprocess.DEVNULL,
                                   env=environment)
        _, status, usage = os.wait4(process.pid, 0)
        # Reaped here, not by Popen: set its status so that it does not wait again.
        process.returncode = os.waitstatus_to_exitcode(status)
        if process.returncode != 0:
            sys.exit(f"pyg_user: {' '.join(map(str, command))} failed ({process.returncode})")
        return json.loads(out.read_text()), usage.ru_maxrss / 1024


def workload(data, system, kind, epochs, seed, args):
    return run_measured([sys.executable, str(WORKLOADS), *SYSTEMS[system], "--workload", kind,
                         "--data", str(data), "--fanouts", args.fanouts,
                         "--batch-size", str(args.batch_size), "--epochs", str(epochs),
                         "--seed", str(seed), "--threads", "2",
                         "--max-minibatches", str(args.max_minibatches),
                         "--eval-every", "0" if args.no_eval else "1"])


def measure(data, args):
    rows = {system: {"loader_seconds": [], "epoch_seconds": [], "test_acc": [], "rss_mib": []}
            for system in args.systems}
    for seed in range(args.seeds):
        order = args.systems[seed % len(args.systems):] + args.systems[:seed % len(args.systems)]
        for system in order:
            row = rows[system]
            if system not in TRAIN_ONLY:
                result, _ = workload(data, system, "loader", args.loader_epochs, seed, args)
                row["loader_seconds"].append(result["seconds"] / args.loader_epochs)
            if args.loader_only:
                if row["loader_seconds"]:
                    print(f"  seed {seed} {system}: loader {row['loader_seconds'][-1]:.3f} "
                          "s/epoch", flush=True)
                continue
            result, rss = workload(data, system, "train", args.epochs, seed, args)
            seconds = [e["seconds"] for e in result["epochs"]]
            row["epoch_seconds"].append(statistics.median(seconds[1:] or seconds))
            row["test_acc"].append(result["final"]["test_acc"] if result["final"] else None)
            row["rss_mib"].append(rss)
            loader = (f"loader {row['loader_seconds'][-1]:.3f} s/epoch, "
                      if row["loader_seconds"] else "")
            test = "" if args.no_eval else f"test {row['test_acc'][-1]:.4f}, "
            print(f"  seed {seed} {system}: {loader}train {row['epoch_seconds'][-1]:.3f} s/epoch, "
                  f"{test}peak RSS {rss:.0f} MiB", flush=True)
    return rows


def table(name, rows):
    base = rows["bulkgnn"]
    print("\n| dataset | system | loader s/epoch | × bulkgnn | train s/epoch | × bulkgnn | "
          "test accuracy | peak RSS MiB |")
    print("|---|---|---:|---:|---:|---:|---|---:|")
    for system, row in rows.items():
        if not row["loader_seconds"] and not row["epoch_seconds"]:
            continue
        accuracy = "—"
        if row["test_acc"] and None not in row["test_acc"]:
            spread = statistics.stdev(row["test_acc"]) if len(row["test_acc"]) > 1 else 0
            accuracy = f"{statistics.mean(row['test_acc']):.4f} ± {spread:.4f}"
        loader = "— | —"
        if row["loader_seconds"]:
            seconds = statistics.median(row["loader_seconds"])
            loader = (f"{seconds:.3f} | "
                      f"{seconds / statistics.median(base['loader_seconds']):.1f}")
        train, rss = "— | —", "—"
        if row["epoch_seconds"]:
            epoch = statistics.median(row["epoch_seconds"])
            train = f"{epoch:.3f} | {epoch / statistics.median(base['epoch_seconds']):.2f}"
            rss = f"{max(row['rss_mib']):.0f}"
        print(f"| {name} | {system} | {loader} | {train} | {accuracy} | {rss} |")


def commit():
    """The bulkgnn commit measured (this checkout's), or None outside a git checkout."""
    result = subprocess.run(["git", "-C", str(HERE), "rev-parse", "HEAD"], capture_output=True,
                            text=True)
    return result.stdout.strip() if result.returncode == 0 else None


def write_products_split(data):
    """A split of ogbn-products' proportions, first in the manifest (the one every system
    trains on)."""
    import numpy as np
    manifest = json.loads((data / "manifest.json").read_text())
    order = np.random.default_rng(0).permutation(manifest["num_nodes"]).astype(np.int32)
    train, valid = int(0.08 * len(order)), int(0.02 * len(order))
    directory = data / "split" / "products-like"
    directory.mkdir(parents=True, exist_ok=True)
    for name, ids in (("train", order[:train]), ("valid", order[train:train + valid]),
                      ("test", order[train + valid:])):
        np.save(directory / f"{name}.npy", np.sort(ids))
    manifest["splits"] = ["products-like"] + [s for s in manifest["splits"]
                                              if s != "products-like"]
    manifest["arrays"] = [a for a in manifest["arrays"] if "/products-like/" not in a] + [
        f"split/products-like/{name}.npy" for name in ("train", "valid", "test")]
    temporary = data / "manifest.json.tmp"
    temporary.write_text(json.dumps(manifest, indent=1) + "\n")
    os.replace(temporary, data / "manifest.json")


def measure_ddp(data, args):
    """Both loaders' DDP runs: every rank's seeds and batches per epoch."""
    results = {}
    for system in ("bulkgnn", "pyg"):
        with tempfile.TemporaryDirectory() as tmp:
            subprocess.run([sys.executable, "-m", "torch.distributed.run", "--standalone",
                            "--nproc_per_node", "2", str(DDP),
                            str(data), "--system", system, "--epochs", str(args.ddp_epochs),
                            "--fanouts", args.fanouts, "--batch-size", str(args.batch_size),
                            "--json-dir", tmp], check=True, stdout=subprocess.DEVNULL,
                           env={**os.environ, "OMP_NUM_THREADS": "1"})
            ranks = [json.loads(p.read_text()) for p in sorted(Path(tmp).glob("rank*.json"))]
        results[system] = ranks
        for r in ranks:
            print(f"  DDP {system} rank {r['rank']}: {r['seeds_per_epoch']} seeds and "
                  f"{r['batches_per_epoch']} batches per epoch of its {r['shard']} "
                  f"({r['seconds_per_epoch']:.2f} s/epoch, peak RSS {r['peak_rss_mib']:.0f} MiB)",
                  flush=True)
    return results


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("data", type=Path, help="a bulkgnn native dataset directory")
    parser.add_argument("--seeds", type=int, default=3)
    parser.add_argument("--epochs", type=int, default=20)
    parser.add_argument("--loader-epochs", type=int, default=3)
    parser.add_argument("--fanouts", default="15,10,5")
    parser.add_argument("--batch-size", type=int, default=1024)
    parser.add_argument("--systems", default=",".join(SYSTEMS))
    parser.add_argument("--max-minibatches", type=int, default=0,
                        help="per epoch (0: all); the times are then of capped epochs")
    parser.add_argument("--no-eval", action="store_true",
                        help="no full-graph evaluation (a products-sized graph's PyG forward "
                             "over every edge does not fit in memory; random labels anyway)")
    parser.add_argument("--products-split", action="store_true",
                        help="first write split/products-like (random 8%% train, 2%% valid, "
                             "90%% test) into the dataset and train on it")
    parser.add_argument("--loader-only", action="store_true",
                        help="no training runs, only the loader runs (and --ddp's): whole "
                             "epochs, for where training is capped with --max-minibatches")
    parser.add_argument("--ddp", action="store_true", help="also the torchrun DDP runs")
    parser.add_argument("--ddp-epochs", type=int, default=3,
                        help="epochs of each DDP run (its time: the median after the first)")
    parser.add_argument("--json", type=Path, help="write every measurement here")
    args = parser.parse_args()
    args.systems = args.systems.split(",")
    unknown = set(args.systems) - set(SYSTEMS)
    if unknown or "bulkgnn" not in args.systems:
        parser.error(f"--systems: bulkgnn and any of {', '.join(SYSTEMS)}; got {args.systems}")
    if min(args.seeds, args.loader_epochs, args.ddp_epochs) < 1:
        parser.error("--seeds, --loader-epochs and --ddp-epochs must be at least 1")
    if args.loader_only and args.max_minibatches:
        parser.error("--loader-only measures whole epochs: leave out --max-minibatches")
    if len(set(args.systems)) != len(args.systems):
        parser.error(f"--systems names a system twice: {args.systems}")
    if args.products_split:
        write_products_split(args.data)
    rows = measure(args.data, args)
    table(args.data.name, rows)
    ddp = measure_ddp(args.data, args) if args.ddp else None
    if args.json:
        args.json.write_text(json.dumps({"data": str(args.data), "options": vars(args) | {
            "data": str(args.data), "json": str(args.json)},
            "arguments": {system: SYSTEMS[system] for system in args.systems},
            "commit": commit(),
            "systems": rows, "ddp": ddp},
            indent=1) + "\n")


if __name__ == "__main__":
    main()
