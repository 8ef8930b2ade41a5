"""Minibatches per second that bulkgnn.NeighborLoader delivers into a Python
loop, with every array a training step takes turned into a torch tensor
(features, seeds, labels, input nodes, each block's indptr and indices; no
copies), or with --pyg into PyG's layout (pyg_fields: edge_index built). The
Python counterpart of benchmarks/peers/loader_throughput.cpp, same options:

    PYTHONPATH=build/python python3 benchmarks/python/loader_throughput.py DATA \
        [--fanouts 15,10,5] [--batch-size 1024] [--bulk 32] [--epochs 1] [--threads 2]

Time runs from the first epoch's start to the last minibatch handed out;
opening the dataset is not timed.
"""

import argparse
import json
import time

import torch

import bulkgnn
from bulkgnn._adapters import pyg_fields


def take_tensors(mb):
    tensors = [torch.from_dlpack(a) for a in (mb.features, mb.seeds, mb.labels, mb.input_nodes)]
    for block in mb.blocks:
        tensors += [torch.from_dlpack(block.indptr), torch.from_dlpack(block.indices)]
    return tensors


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("data")
    parser.add_argument("--split", default="")
    parser.add_argument("--fanouts", default="15,10,5")
    parser.add_argument("--batch-size", type=int, default=1024)
    parser.add_argument("--bulk", type=int, default=32)
    parser.add_argument("--epochs", type=int, default=1)
    parser.add_argument("--threads", type=int, default=2, help="0: every core")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--pyg", action="store_true", help="build PyG's layout of each minibatch")
    parser.add_argument("--json-out")
    args = parser.parse_args()

    ds = bulkgnn.Dataset(args.data)
    loader = bulkgnn.NeighborLoader(ds, ds.training_vertices(args.split),
                                    fanouts=[int(f) for f in args.fanouts.split(",")],
                                    batch_size=args.batch_size, bulk=args.bulk,
                                    threads=args.threads or None, seed=args.seed)
    convert = pyg_fields if args.pyg else take_tensors
    minibatches = feature_bytes = 0
    start = time.perf_counter()
    for _ in range(args.epochs):
        for mb in loader:
            convert(mb)
            minibatches += 1
            feature_bytes += mb.features.shape[0] * mb.features.shape[1] * 4
    seconds = time.perf_counter() - start
    result = {"data": args.data, "fanouts": args.fanouts, "batch_size": args.batch_size,
              "bulk": args.bulk, "threads": args.threads, "epochs": args.epochs,
              "pyg": args.pyg, "minibatches": minibatches, "feature_bytes": feature_bytes,
              "seconds": seconds, "minibatches_per_second": minibatches / seconds}
    print(f"{minibatches} minibatches, {feature_bytes / 1e6:.1f} MB of features in "
          f"{seconds:.3f} s: {minibatches / seconds:.1f} minibatches/s")
    if args.json_out:
        with open(args.json_out, "w") as f:
            json.dump(result, f, indent=2)


if __name__ == "__main__":
    main()
