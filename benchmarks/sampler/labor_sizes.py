#!/usr/bin/env python3
"""Minibatch sizes and epoch time of sage, LABOR-0 and LABOR-i/LABOR-* from the Python loop:
what the importance steps save.

    PYTHONPATH=build/python /usr/bin/python3 benchmarks/sampler/labor_sizes.py \\
        ../shared/data/facebook

One `bulkgnn.NeighborLoader` epoch each (fanouts 15,10,5, batch 1024, seed 0), the second of
two (the first warms up): input vertices and block edges per minibatch, and the epoch's
seconds.
"""

import argparse
import time

import numpy as np

import bulkgnn

RUNS = [("sage", None), ("labor", None), ("labor-star", {"importance_iterations": 1}),
        ("labor-star", {"importance_iterations": 2}), ("labor-star", None)]


def main():
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("dataset")
    args = parser.parse_args()
    ds = bulkgnn.Dataset(args.dataset)
    print("| sampler | options | input vertices/minibatch | edges/minibatch | epoch s |")
    print("|---|---|---:|---:|---:|")
    for name, options in RUNS:
        loader = bulkgnn.NeighborLoader(ds, fanouts=[15, 10, 5], batch_size=1024, sampler=name,
                                        sampler_options=options, seed=0)
        for _ in range(2):
            start = time.perf_counter()
            inputs, edges = [], []
            for mb in loader:
                inputs.append(len(np.from_dlpack(mb.input_nodes)))
                edges.append(sum(len(np.from_dlpack(b.indices)) for b in mb.blocks))
            seconds = time.perf_counter() - start
        print(f"| {name} | {options or ''} | {np.mean(inputs):,.0f} | {np.mean(edges):,.0f} | "
              f"{seconds:.3f} |", flush=True)


if __name__ == "__main__":
    main()
