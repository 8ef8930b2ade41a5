"""How many neighbours DGL's LABOR keeps per destination against the fanout asked:
one hop of dgl.sampling.sample_labors from the first 1,024 vertices, 5 draws each, with
importance_sampling 0, 1 and -1, against Σ_v min(deg v, fanout) (what the paper's constraint
keeps in expectation, and bulkgnn's labor-star keeps, tested).

    PYTHONPATH=build/python ~/.cache/bulkgnn-peers-venv/bin/python \\
        benchmarks/peers/dgl_labor_fanout.py ../shared/data/facebook
"""

import argparse

import torch

import bulkgnn
from labor_loaders import dgl_graph

SEEDS = 1024
DRAWS = 5


def main():
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("dataset")
    args = parser.parse_args()
    import dgl
    graph = dgl_graph(bulkgnn.Dataset(args.dataset))
    seeds = torch.arange(SEEDS)
    degrees = graph.in_degrees()[seeds]
    print("| importance_sampling | fanout | DGL edges (mean of 5) | Σ min(deg, fanout) | ratio |")
    print("|---|---:|---:|---:|---:|")
    for importance in (0, 1, -1):
        for fanout in (5, 10):
            kept = sum(dgl.sampling.sample_labors(graph, seeds, fanout,
                                                  importance_sampling=importance)[0].num_edges()
                       for _ in range(DRAWS)) / DRAWS
            expected = int(torch.clamp(degrees, max=fanout).sum())
            print(f"| {importance} | {fanout} | {kept:,.0f} | {expected:,} | "
                  f"{kept / expected:.2f} |", flush=True)


if __name__ == "__main__":
    main()
