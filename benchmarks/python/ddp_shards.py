#!/usr/bin/env python3
"""A PyG DDP script's loading, as one writes it: each process takes its shard of the
training nodes, `input_nodes=np.array_split(train, world_size)[rank]`, feeds a
DistributedDataParallel GraphSAGE from bulkgnn.NeighborLoader (mb.to_pyg()) or from PyG's
NeighborLoader, both given the same PyG Data (features in memory), and writes what it saw:
its seeds and batches per epoch, its epoch time and its peak resident memory.

    torchrun --standalone --nproc_per_node 2 benchmarks/python/ddp_shards.py NATIVE_DIR \\
        --system bulkgnn|pyg --json-dir DIR

(benchmarks/python/pyg_user.py --ddp runs it for both loaders.)
"""

import argparse
import json
import resource
import time
from pathlib import Path

import numpy as np
import torch
import torch.distributed as dist
import torch.nn.functional as F
from torch_geometric.data import Data

import bulkgnn


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("data", type=Path)
    parser.add_argument("--system", choices=["bulkgnn", "pyg"], required=True)
    parser.add_argument("--epochs", type=int, default=3,
                        help="the time reported is the median after the first epoch")
    parser.add_argument("--fanouts", default="15,10,5")
    parser.add_argument("--batch-size", type=int, default=1024)
    parser.add_argument("--json-dir", type=Path, required=True)
    args = parser.parse_args()
    fanouts = [int(f) for f in args.fanouts.split(",")]

    dist.init_process_group("gloo")
    rank, world = dist.get_rank(), dist.get_world_size()
    torch.set_num_threads(1)
    # The script's data, as a PyG script holds it; both loaders are given it.
    ds = bulkgnn.Dataset(str(args.data))
    train = np.asarray(ds.split()[0])
    shard = np.array_split(train, world)[rank]
    indptr, indices = np.asarray(ds.indptr), np.asarray(ds.indices)
    targets = np.repeat(np.arange(ds.num_nodes), np.diff(indptr))
    data = Data(x=torch.from_numpy(np.array(ds.features)),
                y=torch.from_numpy(np.asarray(ds.labels).astype(np.int64)),
                edge_index=torch.from_numpy(np.stack([indices.astype(np.int64), targets])))
    num_features, num_classes = ds.num_features, ds.num_classes
    del ds, indptr, indices, targets
    if args.system == "bulkgnn":
        loader = bulkgnn.NeighborLoader(data, input_nodes=shard, num_neighbors=fanouts,
                                        batch_size=args.batch_size, shuffle=True, threads=1)
        batches = lambda: (mb.to_pyg() for mb in loader)  # noqa: E731
    else:
        from torch_geometric.loader import NeighborLoader
        loader = NeighborLoader(data, input_nodes=torch.from_numpy(shard.astype(np.int64)),
                                num_neighbors=fanouts, batch_size=args.batch_size,
                                shuffle=True, is_sorted=True)  # edge_index is by destination
        batches = lambda: iter(loader)  # noqa: E731

    from torch_geometric.nn import GraphSAGE
    model = torch.nn.parallel.DistributedDataParallel(
        GraphSAGE(num_features, 128, len(fanouts), num_classes))
    optimizer = torch.optim.Adam(model.parameters(), lr=0.01)
    seeds, steps, seconds = [], [], []
    for _ in range(args.epochs):
        start = time.perf_counter()
        seen = count = 0
        for batch in batches():
            optimizer.zero_grad()
            out = model(batch.x, batch.edge_index)[:batch.batch_size]
            F.cross_entropy(out, batch.y[:batch.batch_size].long()).backward()
            optimizer.step()
            seen += int(batch.batch_size)
            count += 1
        seeds.append(seen)
        steps.append(count)
        seconds.append(time.perf_counter() - start)
    args.json_dir.mkdir(parents=True, exist_ok=True)
    (args.json_dir / f"rank{rank}.json").write_text(json.dumps({
        "rank": rank, "world_size": world, "system": args.system, "shard": len(shard),
        "seeds_per_epoch": seeds, "batches_per_epoch": steps,
        "seconds_per_epoch": float(np.median(seconds[1:] or seconds)),
        "peak_rss_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}))
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
