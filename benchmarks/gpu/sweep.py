#!/usr/bin/env python3
"""Issue 13's GPU measurements in one call on a lent GPU machine.

On one generated graph (R-MAT scale 22, or products-sized: scale 21, edge
factor 30, 100 features), for node-wise (sage 15,10,5) and LADIES (4096 per
hop), batch 1024: sampled edges/s and minibatches/s of `bulkgnn sample`
against the bulk size, on the GPU with the topology in device memory and in
pinned host memory (UVA), and on the CPU back end with every core; whether
the digests agree; PyG's own neighbour sampling on the same GPU if this
torch_geometric can run it there; the device's copy bandwidth (a large
device-to-device copy) and, from it, the bound on sampled edges/s.

    benchmarks/gpu/sweep.py --cli build-gpu-check/tools/bulkgnn \\
        --graph rmat22 --out $OUT/sweep-rmat22 [--budget 540]

Writes OUT/results.json and OUT/table.md, prints the table, and stops
starting runs when the budget (seconds) is spent. Without a GPU it runs the
CPU rows only (a rehearsal: --graph tiny)."""

import argparse
import json
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

GRAPHS = {
    "tiny": ["--scale", "14", "--edge-factor", "16", "--features", "16", "--classes", "4"],
    "rmat22": ["--scale", "22", "--edge-factor", "16", "--features", "16", "--classes", "8"],
    "products": ["--scale", "21", "--edge-factor", "30", "--features", "100", "--classes", "47"],
}
WORKLOADS = {
    "sage": ["--sampler", "sage", "--fanouts", "15,10,5"],
    "ladies": ["--sampler", "ladies", "--fanouts", "4096,4096,4096"],
}
BULKS = [1, 4, 16, 64, 256]
# A sampled edge reads its neighbour id at a random place: one 32-byte DRAM
# sector at least, whatever else it costs.
BYTES_PER_SAMPLED_EDGE = 32


def run_sample(cli, data, workload, device, bulk, extra, minibatches, seconds):
    with tempfile.TemporaryDirectory() as tmp:
        metrics = Path(tmp) / "m.json"
        command = [cli, "sample", str(data), *WORKLOADS[workload], "--batch-size", "1024",
                   "--bulk", str(bulk), "--max-minibatches", str(minibatches),
                   "--device", device, "--quiet", "--metrics-out", str(metrics), *extra]
        try:
            done = subprocess.run(command, capture_output=True, text=True, timeout=seconds)
        except subprocess.TimeoutExpired:
            return {"error": f"did not end within the {seconds:.0f} s left of the budget"}
        if done.returncode != 0:
            return {"error": (done.stdout + done.stderr)[-400:]}
        return json.loads(metrics.read_text())


def gpu_visible():
    try:
        import torch
        return torch.cuda.is_available()
    except ImportError:
        return False


def copy_bandwidth():
    """Bytes per second of a 1 GiB device-to-device copy (read + write)."""
    import torch
    x = torch.empty(1 << 28, dtype=torch.float32, device="cuda")
    y = torch.empty_like(x)
    y.copy_(x)
    torch.cuda.synchronize()
    start = time.perf_counter()
    for _ in range(10):
        y.copy_(x)
    torch.cuda.synchronize()
    return 2 * 10 * x.numel() * 4 / (time.perf_counter() - start)


def pyg_gpu_sampling(data):
    """PyG's neighbour sampling with the graph on the GPU, or why it cannot."""
    try:
        import numpy as np
        import torch
        from torch_geometric.loader import NeighborLoader
        from torch_geometric.data import Data
        indptr = torch.from_numpy(np.load(data / "indptr.npy"))
        indices = torch.from_numpy(np.load(data / "indices.npy")).long()
        rows = torch.repeat_interleave(torch.arange(indptr.numel() - 1), indptr[1:] - indptr[:-1])
        graph = Data(edge_index=torch.stack([indices, rows]).cuda(), num_nodes=indptr.numel() - 1)
        seeds = torch.arange(min(256 * 1024, graph.num_nodes), device="cuda")
        loader = NeighborLoader(graph, num_neighbors=[15, 10, 5], input_nodes=seeds,
                                batch_size=1024)
        edges = 0
        start = time.perf_counter()
        for batch in loader:
            edges += batch.edge_index.size(1)
        torch.cuda.synchronize()
        seconds = time.perf_counter() - start
        return {"edges_per_second": edges / seconds, "minibatches": len(loader)}
    except Exception as e:  # report what happened, whatever it was
        return {"error": f"{type(e).__name__}: {e}"[:400]}


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cli", required=True)
    parser.add_argument("--graph", choices=sorted(GRAPHS), default="rmat22")
    parser.add_argument("--out", required=True, type=Path)
    parser.add_argument("--budget", type=float, default=540)
    parser.add_argument("--minibatches", type=int, default=256)
    args = parser.parse_args()
    started = time.monotonic()
    args.out.mkdir(parents=True, exist_ok=True)
    gpu = gpu_visible()
    results = {"graph": args.graph, "gpu": gpu, "runs": []}
    data = Path(tempfile.mkdtemp(prefix="sweep-"))
    try:
        subprocess.run([args.cli, "generate", "rmat", *GRAPHS[args.graph], "--quiet",
                        str(data / "g")], check=True)
        results["generate_seconds"] = time.monotonic() - started
        if gpu:
            results["copy_bytes_per_second"] = copy_bandwidth()
        # The GPU rows first: a slow CPU row (LADIES at bulk 1) must not take
        # the budget before the GPU has run.
        devices = [("cpu", [])]
        if gpu:
            devices = [("cuda", ["--topology", "device"]), ("cuda", ["--topology", "pinned"]),
                       *devices]
        for workload in WORKLOADS:
            for bulk in BULKS:
                for device, extra in devices:
                    left = args.budget - (time.monotonic() - started)
                    if left <= 0:
                        results["stopped"] = "budget spent"
                        break
                    m = run_sample(args.cli, data / "g", workload, device, bulk, extra,
                                   args.minibatches, left)
                    results["runs"].append({"workload": workload, "bulk": bulk, "device": device,
                                            "placement": " ".join(extra), **{
                                                k: m.get(k) for k in (
                                                    "edges_per_second", "minibatches_per_second",
                                                    "digest", "error", "stages")}})
        if gpu and time.monotonic() - started < args.budget:
            results["pyg"] = pyg_gpu_sampling(data / "g")
    finally:
        shutil.rmtree(data, ignore_errors=True)
    (args.out / "results.json").write_text(json.dumps(results, indent=1))
    table = render(results)
    (args.out / "table.md").write_text(table)
    print(table)
    digests = {}
    for r in results["runs"]:
        digests.setdefault((r["workload"], r["bulk"]), set()).add(r.get("digest"))
    disagree = [k for k, d in digests.items() if len(d) > 1]
    if disagree:
        print(f"DIGESTS DIFFER between devices for {disagree}", file=sys.stderr)
        return 1
    return 0


def render(results):
    lines = [f"graph {results['graph']}; generated in {results.get('generate_seconds', 0):.0f} s"]
    bandwidth = results.get("copy_bytes_per_second")
    if bandwidth:
        lines.append(f"device copy bandwidth {bandwidth / 1e9:.0f} GB/s: at {BYTES_PER_SAMPLED_EDGE}"
                     f" B per sampled edge, at most {bandwidth / BYTES_PER_SAMPLED_EDGE / 1e9:.2f}"
                     " G edges/s")
    lines += ["", "| workload | bulk | device | placement | edges/s | minibatches/s | digest |",
              "|---|---:|---|---|---:|---:|---|"]
    for r in results["runs"]:
        if r.get("error"):
            message = re.sub(r"[|\n]", " ", r["error"])[:120]
            lines.append(f"| {r['workload']} | {r['bulk']} | {r['device']} | {r['placement']} | "
                         f"error: {message} | | |")
            continue
        lines.append(f"| {r['workload']} | {r['bulk']} | {r['device']} | {r['placement']} | "
                     f"{r['edges_per_second']:.4g} | {r['minibatches_per_second']:.4g} | "
                     f"{r['digest']} |")
    if "pyg" in results:
        lines += ["", f"PyG on the GPU (sage 15,10,5, batch 1024): {results['pyg']}"]
    if results.get("stopped"):
        lines += ["", f"stopped early: {results['stopped']}"]
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    sys.exit(main())
