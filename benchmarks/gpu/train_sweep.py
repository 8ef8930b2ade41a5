#!/usr/bin/env python3
"""Issue 15's GPU training measurements in one call on a lent GPU machine.

GraphSAGE 15,10,5, hidden 256, batch 1024, on one generated graph (products-sized
R-MAT: scale 21, edge factor 30, 100 features; or --graph tiny for a rehearsal) and on
any native dataset given with --data (facebook, say): the time per epoch of the same
--minibatches minibatches for

  gpu-gpu    bulkgnn train --device cuda --sample-on cuda (sampling, gather and
             training on the GPU; the minibatches stay in device memory; cuBLAS GEMMs,
             the GPU's default)
  gpu-gpu-exact  the same with --gemm exact (the GEMMs that give the CPU's bits)
  cpu-gpu    bulkgnn train --device cuda (host sampling and gather, the host_to_device
             stage, training on the GPU)
  cpu        bulkgnn train --device cpu on every core
  pyg-gpu    PyG's NeighborLoader (on the host) + SAGEConv on the GPU, through
             benchmarks/peers/peer_workloads.py --device cuda
  bulkgnn-py-gpu         the same PyG model fed by bulkgnn.NeighborLoader on the host
                         (mb.to_pyg(), moved to the GPU)
  bulkgnn-py-gpu-loader  ... fed by bulkgnn.NeighborLoader(device="cuda"), which samples
                         and gathers on the GPU
             (both need the GPU build's Python extension, which gpu_check.sh's python
             step builds; without it the row says so)

with per-stage busy times and the overlap ratio (epoch time over the slowest stage) of
bulkgnn's runs, and whether the bulkgnn runs trained the same model: the losses of
gpu-gpu-exact and cpu must be equal (the exact GPU kernels give the CPU's bits), those of
the cuBLAS runs (gpu-gpu, cpu-gpu) within 1e-3 (relative) of them. Each
system trains --epochs epochs; the first is a warm-up and the rest are averaged.

    benchmarks/gpu/train_sweep.py --cli build-gpu-check/tools/bulkgnn \\
        --out $OUT/train-sweep [--data shared/facebook] [--budget 420]

Writes OUT/results.json and OUT/table.md and prints the table; stops starting runs when
the budget (seconds) is spent. Without a GPU it runs the cpu rows only."""

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from sweep import gpu_visible  # issue 13's sweep, next to this script

GRAPHS = {
    "tiny": ["--scale", "14", "--edge-factor", "16", "--features", "16", "--classes", "4"],
    "products": ["--scale", "21", "--edge-factor", "30", "--features", "100", "--classes", "47"],
}
MODEL = ["--sampler", "sage", "--fanouts", "15,10,5", "--hidden", "256", "--batch-size", "1024"]
BULKGNN_SYSTEMS = {
    "gpu-gpu": ["--device", "cuda", "--sample-on", "cuda"],
    "gpu-gpu-exact": ["--device", "cuda", "--sample-on", "cuda", "--gemm", "exact"],
    "cpu-gpu": ["--device", "cuda", "--sample-on", "cpu"],
    "cpu": ["--device", "cpu"],
}
EXACT_SYSTEMS = {"gpu-gpu-exact", "cpu"}
PEERS = Path(__file__).resolve().parent.parent / "peers" / "peer_workloads.py"
# The PyG model on the GPU, fed by: peer_workloads.py's system, its extra flags.
PYG_MODEL_SYSTEMS = {
    "pyg-gpu": ("pyg", []),
    "bulkgnn-py-gpu": ("bulkgnn-py", []),
    "bulkgnn-py-gpu-loader": ("bulkgnn-py", ["--loader-device", "cuda"]),
}


def mean_after_warm_up(values):
    rest = values[1:] or values
    return sum(rest) / len(rest)


def run_bulkgnn(cli, data, flags, args):
    with tempfile.TemporaryDirectory() as tmp:
        metrics = Path(tmp) / "m.json"
        command = [cli, "train", str(data), *MODEL, "--epochs", str(args.epochs),
                   "--max-minibatches", str(args.minibatches), "--eval-every", "0", "--quiet",
                   "--metrics-out", str(metrics), *flags]
        started = time.monotonic()
        done = subprocess.run(command, capture_output=True, text=True)
        if done.returncode != 0:
            return {"error": (done.stdout + done.stderr)[-400:]}
        m = json.loads(metrics.read_text())
        epochs = m["epochs"]
        last = epochs[-1]
        stages = {name: s["busy"] for name, s in last["stages"].items()}
        return {"epoch_seconds": mean_after_warm_up([e["seconds"] for e in epochs]),
                "losses": [e["loss"] for e in epochs],
                "overlap": last["overlap_ratio"], "stages": stages,
                "placement": next((line for line in done.stdout.splitlines()
                                   if " on " in line and "training" in line), ""),
                "wall_seconds": time.monotonic() - started}


def run_pyg_model(cli, system, data, args):
    """The PyG model's epochs on the GPU, fed by PyG's loader or bulkgnn's."""
    peer_system, extra = PYG_MODEL_SYSTEMS[system]
    env = dict(os.environ)
    if peer_system == "bulkgnn-py":
        # The extension gpu_check.sh's python step builds next to the CLI's build.
        package = Path(cli).resolve().parent.parent / "python"
        if not (package / "bulkgnn").is_dir():
            return {"error": f"no Python extension in {package} (gpu_check.sh's python step "
                             "did not build it)"}
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(package),
                                                          env.get("PYTHONPATH")]))
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "pyg.json"
        command = [sys.executable, str(PEERS), "--system", peer_system, "--workload", "train",
                   "--data", str(data), "--fanouts", "15,10,5", "--hidden", "256",
                   "--batch-size", "1024", "--epochs", str(args.epochs),
                   "--max-minibatches", str(args.minibatches), "--eval-every", "0",
                   "--threads", str(os.cpu_count()), "--device", "cuda", "--json-out", str(out),
                   *extra]
        done = subprocess.run(command, capture_output=True, text=True, env=env)
        if done.returncode != 0:
            return {"error": (done.stdout + done.stderr)[-400:]}
        r = json.loads(out.read_text())
        return {"epoch_seconds": mean_after_warm_up([e["seconds"] for e in r["epochs"]]),
                "losses": [e["loss"] for e in r["epochs"]],
                "sampler_backend": r.get("sampler_backend")}


def measure(cli, name, data, args, gpu, started, results):
    systems = ["gpu-gpu", "gpu-gpu-exact", "cpu-gpu", "cpu", *PYG_MODEL_SYSTEMS] if gpu else ["cpu"]
    for system in systems:
        if time.monotonic() - started > args.budget:
            results["stopped"] = "budget spent"
            return
        r = (run_pyg_model(cli, system, data, args) if system in PYG_MODEL_SYSTEMS else
             run_bulkgnn(cli, data, BULKGNN_SYSTEMS[system], args))
        results["runs"].append({"graph": name, "system": system, **r})


def same_model_verdict(runs, graph):
    """Whether the exact runs have equal losses and the cuBLAS runs close ones."""
    losses = {r["system"]: r["losses"] for r in runs
              if r["graph"] == graph and r["system"] not in PYG_MODEL_SYSTEMS and "losses" in r}
    exact = {tuple(v) for k, v in losses.items() if k in EXACT_SYSTEMS}
    if len(exact) > 1:
        return f"exact runs trained DIFFERENT models: {sorted(exact)}"
    if not exact:
        return "no exact run to compare with"
    reference = next(iter(exact))
    far = [k for k, v in losses.items() if k not in EXACT_SYSTEMS and (
        len(v) != len(reference)
        or any(abs(x - y) > 1e-3 * abs(y) for x, y in zip(v, reference)))]
    if far:
        return f"cuBLAS runs {', '.join(far)} are MORE than 1e-3 from the exact losses"
    return ("exact runs trained the same model (equal losses); cuBLAS runs within 1e-3"
            if len(losses) > len(exact) else "the same model (equal losses)")


def render(results):
    lines = [f"GraphSAGE 15,10,5, hidden 256, batch 1024, {results['minibatches']} minibatches "
             f"per epoch; gpu: {results['gpu']}", "",
             "| graph | system | s/epoch | vs pyg-gpu | overlap | busiest stages (s) |",
             "|---|---|---:|---:|---:|---|"]
    pyg = {r["graph"]: r.get("epoch_seconds") for r in results["runs"]
           if r["system"] == "pyg-gpu"}
    for r in results["runs"]:
        if r.get("error"):
            message = re.sub(r"[|\n]", " ", r["error"])[:160]
            lines.append(f"| {r['graph']} | {r['system']} | error: {message} | | | |")
            continue
        ratio = pyg.get(r["graph"])
        ratio = f"{ratio / r['epoch_seconds']:.2f}x" if ratio else ""
        stages = ", ".join(f"{k} {v:.2f}" for k, v in sorted(
            r.get("stages", {}).items(), key=lambda kv: -kv[1])[:3])
        overlap = f"{r['overlap']:.2f}" if "overlap" in r else ""
        lines.append(f"| {r['graph']} | {r['system']} | {r['epoch_seconds']:.3f} | {ratio} | "
                     f"{overlap} | {stages} |")
    for graph in sorted({r["graph"] for r in results["runs"]}):
        lines.append(f"\n{graph}: {same_model_verdict(results['runs'], graph)}")
    if results.get("stopped"):
        lines += ["", f"stopped early: {results['stopped']}"]
    return "\n".join(lines) + "\n"


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cli", required=True)
    parser.add_argument("--graph", choices=sorted(GRAPHS), default="products")
    parser.add_argument("--data", action="append", default=[], type=Path,
                        help="a native dataset to measure too (repeatable)")
    parser.add_argument("--out", required=True, type=Path)
    parser.add_argument("--budget", type=float, default=420)
    parser.add_argument("--minibatches", type=int, default=40)
    parser.add_argument("--epochs", type=int, default=3)
    args = parser.parse_args()
    started = time.monotonic()
    args.out.mkdir(parents=True, exist_ok=True)
    gpu = gpu_visible()
    results = {"gpu": gpu, "minibatches": args.minibatches, "runs": []}
    generated = Path(tempfile.mkdtemp(prefix="train-sweep-"))
    try:
        subprocess.run([args.cli, "generate", "rmat", *GRAPHS[args.graph], "--quiet",
                        str(generated / "g")], check=True)
        results["generate_seconds"] = time.monotonic() - started
        measure(args.cli, args.graph, generated / "g", args, gpu, started, results)
        for data in args.data:
            measure(args.cli, data.name, data, args, gpu, started, results)
    finally:
        shutil.rmtree(generated, ignore_errors=True)
    (args.out / "results.json").write_text(json.dumps(results, indent=1))
    table = render(results)
    (args.out / "table.md").write_text(table)
    print(table)
    return 1 if "DIFFERENT" in table else 0


if __name__ == "__main__":
    sys.exit(main())
