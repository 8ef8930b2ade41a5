"""bulkgnn side by side with PyTorch Geometric and DGL: one command, every workload.

Run it through benchmarks/peers/run.sh (which creates the pinned peer environment first
and runs this file with its interpreter):

  benchmarks/peers/run.sh            # the full comparison (about 25 minutes on 2 cores)
  benchmarks/peers/run.sh --quick    # a smoke run of a few minutes on small inputs

Workloads (identical for every system: same graph, split, features, fanouts, batch size,
model, optimizer and epochs; 2 threads for everyone):
  sample  node-wise sampling only (15,10,5 and 10,10 at batch 1024), LADIES against a
          numpy/scipy port of the algorithm (neither peer ships one);
  loader  sampling plus feature gather, as a trainer consumes it: bulkgnn's C++ consumer,
          bulkgnn.NeighborLoader in a Python loop (mb.to_pyg()), and PyG's and DGL's
          loaders with 0 and 2 worker processes;
  train   GraphSAGE training to a fixed epoch count: epoch time and test accuracy, for
          bulkgnn's trainer, PyG's model fed by bulkgnn.NeighborLoader (to_pyg) and by
          PyG's NeighborLoader (0 and 2 workers), DGL's model fed by bulkgnn (to_dgl)
          and by DGL's DataLoader.
Datasets: cora and facebook (../shared/data), soc-slashdot0902 with 128 random features,
R-MAT scale 20 (edge factor 16, undirected) with 128 random features.

For each measurement the systems run one after another (bulkgnn, PyG, DGL, rotating the
order each repetition), each in a fresh process; the report takes medians over
repetitions. Every measurement is appended to results/measurements.csv as soon as it is
taken; report.py then writes the plots and the table in benchmarks/README.md.
"""

import argparse
import csv
import json
import os
import shlex
import subprocess
import sys
import tempfile
import time
from datetime import datetime, timezone
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
REPO = HERE.parent.parent

CSV_FIELDS = ["run_id", "mode", "workload", "dataset", "config", "system", "sampler_backend",
              "repetition", "seed", "epoch", "metric", "value", "busy_before", "command",
              "invocation"]

# System ids of the plan -> (peer_workloads.py --system, --workers).
PYTHON_SYSTEMS = {"bulkgnn-py": ("bulkgnn-py", 0), "bulkgnn-py-dgl": ("bulkgnn-py-dgl", 0),
                  "pyg": ("pyg", 0), "pyg-w2": ("pyg", 2), "dgl": ("dgl", 0),
                  "dgl-w2": ("dgl", 2), "ladies-ref": ("ladies-ref", 0)}


def log(message):
    print(f"[{datetime.now().strftime('%H:%M:%S')}] {message}", flush=True)


def run_command(command, env, timeout):
    """Runs a command, returns its wall time; raises with its stderr tail on failure."""
    start = time.perf_counter()
    done = subprocess.run(command, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          text=True, timeout=timeout)
    if done.returncode != 0:
        raise RuntimeError(f"exit {done.returncode}: {shlex.join(command)}\n"
                           + done.stderr[-3000:])
    return time.perf_counter() - start


def cpu_busy_fraction(interval=0.5):
    """Share of all CPUs busy (not idle/iowait) over `interval` seconds, from /proc/stat."""
    def sample():
        fields = [int(x) for x in Path("/proc/stat").read_text().split("\n")[0].split()[1:]]
        return sum(fields), fields[3] + fields[4]
    total0, idle0 = sample()
    time.sleep(interval)
    total1, idle1 = sample()
    return 1.0 - (idle1 - idle0) / max(total1 - total0, 1)


def wait_for_quiet(threshold=0.25, patience=3.0):
    """Waits (at most `patience` s) until other processes use under `threshold` of the CPUs,
    so that a measurement does not start while someone else compiles. Returns the last
    busy fraction seen, which goes into the CSV either way."""
    deadline = time.monotonic() + patience
    busy = cpu_busy_fraction()
    while busy > threshold and time.monotonic() < deadline:
        busy = cpu_busy_fraction()
    return busy


# ----------------------------------------------------------------------------- data

def prepare_datasets(bulkgnn, shared_data, cache, quick):
    """Native datasets that every system reads, built once into `cache` (outside the repo).

    cora, facebook: `bulkgnn convert` of the OGB raw folders (undirected: both directions).
    soc-slashdot0902: converted as given (directed), plus features.npy = 128 standard
    normal float32 columns from numpy's default_rng(0).
    R-MAT: `bulkgnn generate rmat --undirected --features 128 --classes 32` (random
    features and labels; scale 20, or 16 in --quick mode)."""
    cache.mkdir(parents=True, exist_ok=True)
    datasets = {}
    for name in ("cora", "facebook"):
        target = cache / name
        if not (target / "manifest.json").exists():
            log(f"converting {name}")
            run_command([str(bulkgnn), "convert", str(shared_data / name), str(target),
                         "--quiet"], os.environ.copy(), 600)
        datasets[name] = target

    target = cache / "soc-slashdot0902-f128"
    if not (target / "manifest.json").exists():
        log("converting soc-slashdot0902 and adding 128 random features (numpy, seed 0)")
        staging = Path(tempfile.mkdtemp(dir=cache, prefix=".slashdot-"))
        run_command([str(bulkgnn), "convert", str(shared_data / "soc-slashdot0902"),
                     str(staging / "d"), "--quiet"], os.environ.copy(), 600)
        manifest_path = staging / "d" / "manifest.json"
        manifest = json.loads(manifest_path.read_text())
        features = np.random.default_rng(0).standard_normal(
            (int(manifest["num_nodes"]), 128), dtype=np.float32)
        np.save(staging / "d" / "features.npy", features)
        manifest["arrays"].append("features.npy")
        manifest["num_features"] = 128
        manifest["name"] = "soc-slashdot0902-f128"
        manifest_path.write_text(json.dumps(manifest, indent=2) + "\n")
        (staging / "d").rename(target)
        staging.rmdir()
    datasets["slashdot"] = target

    scale = 16 if quick else 20
    target = cache / f"rmat-s{scale}-e16-u-f128-c32"
    if not (target / "manifest.json").exists():
        log(f"generating R-MAT scale {scale}")
        run_command([str(bulkgnn), "generate", "rmat", "--scale", str(scale), "--edge-factor",
                     "16", "--undirected", "--features", "128", "--classes", "32", str(target),
                     "--quiet"], os.environ.copy(), 1200)
    datasets["rmat"] = target
    return datasets


# ----------------------------------------------------------------------------- plan

def plan_measurements(datasets, quick):
    """The list of measurements: (workload, dataset, config, settings, repetitions)."""
    # Epochs and minibatch caps per dataset for the sampling/loader workloads: enough
    # minibatches for a stable rate, bounded on R-MAT.
    if quick:
        stream = {"cora": (5, 0), "facebook": (1, 0), "slashdot": (1, 20), "rmat": (1, 10)}
        ladies_stream = {"cora": (2, 0), "facebook": (1, 4), "slashdot": (1, 4),
                         "rmat": (1, 4)}
    else:
        stream = {"cora": (50, 0), "facebook": (5, 0), "slashdot": (2, 0), "rmat": (1, 100)}
        ladies_stream = {"cora": (20, 0), "facebook": (2, 0), "slashdot": (1, 40),
                         "rmat": (1, 16)}
    plan = []
    systems_of = {"sample": ["bulkgnn", "pyg", "dgl"],
                  "loader": ["bulkgnn", "bulkgnn-py", "pyg", "pyg-w2", "dgl", "dgl-w2"]}
    for workload in ("sample", "loader"):
        for name in ("cora", "facebook", "slashdot", "rmat"):
            for fanouts in ("15,10,5", "10,10"):
                epochs, cap = stream[name]
                plan.append(dict(workload=workload, dataset=name, config=f"sage {fanouts}",
                                 systems=systems_of[workload], sampler="sage",
                                 fanouts=fanouts, batch_size=1024, epochs=epochs,
                                 max_minibatches=cap, seeds=[0, 1, 2] if not quick else [0]))
    for name in ("cora", "facebook", "slashdot", "rmat"):
        epochs, cap = ladies_stream[name]
        plan.append(dict(workload="sample", dataset=name, config="ladies 1024,1024,1024",
                         systems=["bulkgnn", "ladies-ref"], sampler="ladies",
                         fanouts="1024,1024,1024", batch_size=1024, epochs=epochs,
                         max_minibatches=cap, seeds=[0, 1, 2] if not quick else [0]))
    # End to end: the accuracy table's settings (README: Accuracy) on the labelled
    # datasets, 5 seeds; R-MAT (random labels) for speed only, a fixed number of
    # minibatches per epoch.
    train_seeds = [0, 1] if quick else [0, 1, 2, 3, 4]
    train_systems = ["bulkgnn", "bulkgnn-py", "pyg", "pyg-w2", "bulkgnn-py-dgl", "dgl"]
    plan.append(dict(workload="train", dataset="cora", config="sage 10,10 b64 h128",
                     systems=train_systems, fanouts="10,10", batch_size=64,
                     hidden=128, lr=0.01, weight_decay=5e-4, epochs=10 if quick else 60,
                     max_minibatches=0, eval_every=1, seeds=train_seeds))
    plan.append(dict(workload="train", dataset="facebook", config="sage 10,10 b512 h128",
                     systems=train_systems, fanouts="10,10", batch_size=512,
                     hidden=128, lr=0.01, weight_decay=0.0, epochs=3 if quick else 30,
                     max_minibatches=0, eval_every=1, seeds=train_seeds))
    plan.append(dict(workload="train", dataset="rmat",
                     config=f"sage 15,10,5 b1024 h256, {3 if quick else 10} minibatches/epoch",
                     systems=["bulkgnn", "bulkgnn-py", "pyg", "dgl"], fanouts="15,10,5",
                     batch_size=1024,
                     hidden=256, lr=0.003, weight_decay=0.0, epochs=2 if quick else 3,
                     max_minibatches=3 if quick else 10, eval_every=0,
                     seeds=[0] if quick else [0, 1, 2]))
    for m in plan:
        m["data"] = datasets[m["dataset"]]
    return plan


def command_for(system, m, seed, out_file, bulkgnn, loader_bin, python):
    """The exact command line of one measurement."""
    data = str(m["data"])
    if system == "bulkgnn":
        if m["workload"] == "sample":
            return [str(bulkgnn), "sample", data, "--sampler", m["sampler"], "--fanouts",
                    m["fanouts"], "--batch-size", str(m["batch_size"]), "--bulk", "16",
                    "--epochs", str(m["epochs"]), "--max-minibatches",
                    str(m["max_minibatches"]), "--seed", str(seed), "--threads", "2",
                    "--quiet", "--metrics-out", out_file]
        if m["workload"] == "loader":
            return [str(loader_bin), data, "--fanouts", m["fanouts"], "--batch-size",
                    str(m["batch_size"]), "--bulk", "16", "--epochs", str(m["epochs"]),
                    "--max-minibatches", str(m["max_minibatches"]), "--seed", str(seed),
                    "--threads", "2", "--json-out", out_file]
        # --bulk 4: an epoch here has 3 (cora), 27 (facebook) or 10 (R-MAT) minibatches,
        # and with the default bulk of 32 the trainer would wait for a whole epoch to be
        # sampled before its first step (README: choose a bulk well below the minibatches
        # per epoch).
        return [str(bulkgnn), "train", data, "--sampler", "sage", "--fanouts", m["fanouts"],
                "--batch-size", str(m["batch_size"]), "--bulk", "4", "--hidden", str(m["hidden"]),
                "--dropout", "0.5", "--lr", str(m["lr"]), "--weight-decay",
                str(m["weight_decay"]), "--epochs", str(m["epochs"]), "--max-minibatches",
                str(m["max_minibatches"]), "--eval-every", str(m["eval_every"]), "--seed",
                str(seed), "--threads", "2", "--quiet", "--metrics-out", out_file]
    name, workers = PYTHON_SYSTEMS[system]
    # bulkgnn's Python loader runs with the bulk of the C++ runs of the same workload.
    bulk = "4" if m["workload"] == "train" else "16"
    command = [python, str(HERE / "peer_workloads.py"), "--system", name, "--workload",
               m["workload"], "--data", data, "--fanouts", m["fanouts"], "--batch-size",
               str(m["batch_size"]), "--epochs", str(m["epochs"]), "--max-minibatches",
               str(m["max_minibatches"]), "--seed", str(seed), "--threads", "2",
               "--workers", str(workers), "--bulk", bulk, "--json-out", out_file]
    if m["workload"] == "train":
        command += ["--hidden", str(m["hidden"]), "--dropout", "0.5", "--lr", str(m["lr"]),
                    "--weight-decay", str(m["weight_decay"]), "--eval-every",
                    str(m["eval_every"])]
    return command


def rows_of(system, m, result):
    """(metric, epoch, value) triples of one measurement's JSON, whoever produced it."""
    if m["workload"] == "train":
        rows = [("epoch_seconds", e["epoch"], e["seconds"]) for e in result["epochs"]]
        final = result.get("final")
        if final and final.get("test_acc") is not None:
            rows += [("test_acc", "", final["test_acc"]), ("valid_acc", "", final["valid_acc"])]
        return rows
    rows = [("minibatches_per_second", "", result["minibatches_per_second"]),
            ("edges_per_second", "", result["edges_per_second"]),
            ("minibatches", "", result["minibatches"]),
            ("sampled_edges", "", result["sampled_edges"]),
            ("seconds", "", result["seconds"])]
    if m["workload"] == "loader":
        rows.append(("feature_bytes_per_second", "", result["feature_bytes_per_second"]))
    return rows


def main():
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true",
                        help="smoke run: small R-MAT, few minibatches, 1-2 repetitions")
    parser.add_argument("--build", type=Path, default=REPO / "build",
                        help="bulkgnn build directory (default: build/)")
    parser.add_argument("--shared-data", type=Path, default=REPO.parent / "shared" / "data")
    parser.add_argument("--cache", type=Path,
                        default=Path(os.environ.get("BULKGNN_PEERS_DATA",
                                                    Path.home() / ".cache" /
                                                    "bulkgnn-peers-data")),
                        help="where the prepared native datasets are kept")
    parser.add_argument("--out", type=Path, default=HERE / "results",
                        help="results directory (CSV, JSON of every run, plots)")
    parser.add_argument("--only", default="",
                        help="comma-separated workloads to run (sample,loader,train)")
    parser.add_argument("--systems", default="",
                        help="comma-separated systems to run (default: all)")
    parser.add_argument("--append", action="store_true",
                        help="add to the CSV instead of starting it afresh (to run the "
                             "workloads in several invocations, e.g. --only train --append)")
    parser.add_argument("--no-report", action="store_true",
                        help="skip report.py (plots and the README table)")
    args = parser.parse_args()

    bulkgnn = args.build / "tools" / "bulkgnn"
    loader_bin = args.build / "benchmarks" / "loader_throughput"
    for binary in (bulkgnn, loader_bin):
        if not binary.exists():
            sys.exit(f"{binary} is missing: run scripts/build.sh first")

    env = os.environ.copy()
    env.update(OMP_NUM_THREADS="2", MKL_NUM_THREADS="2", OPENBLAS_NUM_THREADS="2",
               PYTHONHASHSEED="0")
    # `import bulkgnn` (bulkgnn-py systems) from this build's extension.
    python_package = args.build / "python"
    if not (python_package / "bulkgnn").is_dir():
        sys.exit(f"{python_package}/bulkgnn is missing: build bulkgnn with Python's headers "
                 "installed (scripts/build.sh)")
    env["PYTHONPATH"] = os.pathsep.join(
        [str(python_package)] + ([env["PYTHONPATH"]] if env.get("PYTHONPATH") else []))
    mode = "quick" if args.quick else "full"
    # How this run was started (run.sh passes its arguments on after --build).
    passed = sys.argv[1:]
    if passed[:2] == ["--build", str(REPO / "build")]:
        passed = passed[2:]
    invocation = shlex.join(["benchmarks/peers/run.sh"] + passed)
    run_id = datetime.now(timezone.utc).strftime("%Y%m%dT%H%M%SZ")
    args.out.mkdir(parents=True, exist_ok=True)
    raw_dir = args.out / "raw" / f"{run_id}-{mode}"
    raw_dir.mkdir(parents=True)
    csv_path = args.out / ("measurements-quick.csv" if args.quick else "measurements.csv")

    datasets = prepare_datasets(bulkgnn, args.shared_data, args.cache, args.quick)
    plan = plan_measurements(datasets, args.quick)
    if args.only:
        wanted = set(args.only.split(","))
        plan = [m for m in plan if m["workload"] in wanted]
    if args.systems:
        wanted = set(args.systems.split(","))
        for m in plan:
            m["systems"] = [s for s in m["systems"] if s in wanted]
    total = sum(len(m["systems"]) * len(m["seeds"]) for m in plan)
    log(f"run {run_id} ({mode}): {total} measurements; CSV {csv_path}; raw JSON {raw_dir}")

    append = args.append and csv_path.exists() and csv_path.stat().st_size > 0
    with open(csv_path, "a" if append else "w", newline="") as csv_file:
        writer = csv.DictWriter(csv_file, fieldnames=CSV_FIELDS)
        if not append:
            writer.writeheader()
        done = 0
        for m in plan:
            for repetition, seed in enumerate(m["seeds"]):
                # Rotate who goes first so no system always runs on a warmer machine.
                systems = m["systems"][repetition % len(m["systems"]):] + \
                    m["systems"][:repetition % len(m["systems"])]
                for system in systems:
                    done += 1
                    out_file = raw_dir / (f"{m['workload']}-{m['dataset']}-"
                                          f"{m['config'].split(',')[0].replace(' ', '_')}-"
                                          f"{m['fanouts']}-{system}-{seed}.json")
                    command = command_for(system, m, seed, str(out_file), bulkgnn, loader_bin,
                                          sys.executable)
                    label = f"[{done}/{total}] {m['workload']} {m['dataset']} {m['config']} " \
                            f"{system} rep {repetition}"
                    # The machine is shared: wait briefly for the others to go quiet and
                    # record how busy the CPUs were just before the run.
                    busy_before = wait_for_quiet()
                    try:
                        wall = run_command(command, env, timeout=1800)
                    except (RuntimeError, subprocess.TimeoutExpired) as error:
                        log(f"{label}: FAILED {error}")
                        continue
                    result = json.loads(out_file.read_text())
                    backend = result.get("sampler_backend", "bulkgnn " + (
                        "minibatch_loader" if m["workload"] == "loader" else "bulk_sampler"))
                    for metric, epoch, value in rows_of(system, m, result):
                        writer.writerow(dict(run_id=run_id, mode=mode, workload=m["workload"],
                                             dataset=m["dataset"], config=m["config"],
                                             system=system, sampler_backend=backend,
                                             repetition=repetition, seed=seed, epoch=epoch,
                                             metric=metric, value=value,
                                             busy_before=f"{busy_before:.2f}",
                                             invocation=invocation,
                                             command=shlex.join(command)))
                    csv_file.flush()
                    if m["workload"] == "train":
                        times = [e["seconds"] for e in result["epochs"]]
                        final = result.get("final") or {}
                        summary = f"median epoch {np.median(times[1:] or times):.3f} s" + (
                            f", test {final['test_acc']:.4f}" if final.get("test_acc") else "")
                    else:
                        summary = f"{result['minibatches_per_second']:.1f} minibatches/s, " \
                                  f"{result['edges_per_second'] / 1e6:.2f} M edges/s"
                    log(f"{label}: {summary} ({wall:.1f} s wall, CPUs {100 * busy_before:.0f}% busy before)")
    log(f"wrote {csv_path}")
    if not args.no_report:
        # A smoke run writes its own summary-quick.md but leaves the README's table alone.
        subprocess.run([sys.executable, str(HERE / "report.py"), "--csv", str(csv_path)]
                       + (["--no-readme"] if args.quick else []), check=True)


if __name__ == "__main__":
    main()
