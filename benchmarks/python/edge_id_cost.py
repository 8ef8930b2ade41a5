"""What asking for e_id costs: per epoch of bulkgnn.NeighborLoader minibatches, the time
of the PyG edge layout alone (mb._pyg_edges(), what every to_pyg() builds) against the
edge numbers to_pyg(e_id=True) adds (mb._pyg_edge_ids()), measured side by side.

    PYTHONPATH=build/python /usr/bin/python3 benchmarks/python/edge_id_cost.py \\
        ../shared/data/facebook [--epochs 3]
"""

import argparse
import time

import bulkgnn


def main():
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("dataset")
    parser.add_argument("--epochs", type=int, default=3)
    parser.add_argument("--fanouts", default="15,10,5")
    parser.add_argument("--batch-size", type=int, default=1024)
    args = parser.parse_args()
    ds = bulkgnn.Dataset(args.dataset)
    loader = bulkgnn.NeighborLoader(ds, num_neighbors=[int(f) for f in args.fanouts.split(",")],
                                    batch_size=args.batch_size, threads=2, seed=0)
    print("| epoch | minibatches | edges | layout s | e_id s | e_id per minibatch ms |")
    print("|---|---|---|---|---|---|")
    for epoch in range(args.epochs):
        layout = numbers = 0.0
        count = edges = 0
        for mb in loader:
            start = time.perf_counter()
            edge_index, _, _ = mb._pyg_edges()
            middle = time.perf_counter()
            mb._pyg_edge_ids()
            layout += middle - start
            numbers += time.perf_counter() - middle
            count += 1
            edges += edge_index.shape[1]
        print(f"| {epoch} | {count} | {edges:,} | {layout:.3f} | {numbers:.3f} | "
              f"{1000 * numbers / count:.2f} |", flush=True)


if __name__ == "__main__":
    main()
