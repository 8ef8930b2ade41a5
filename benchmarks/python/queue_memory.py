"""Peak resident memory of bulkgnn.NeighborLoader by queue_bytes, under a
training loop that takes a fixed time per minibatch (the queues fill only
when the loop is slower than the pipeline).

    PYTHONPATH=build/python /usr/bin/python3 benchmarks/python/queue_memory.py \\
        [--step-seconds 0.03] [--epochs 2] [--queue-bytes 0 1099511627776 67108864]

Each setting runs in a process of its own (a peak RSS is per process), on the
embedded default dataset; 0 is the default bound, 2**40 stands for no byte
bound (the loader before queue_bytes).
"""

import argparse
import resource
import subprocess
import sys
import time


def one_run(queue_bytes, step_seconds, epochs):
    import bulkgnn

    ds = bulkgnn.Dataset()
    loader = bulkgnn.NeighborLoader(ds, fanouts=[15, 10, 5], batch_size=1024,
                                    queue_bytes=queue_bytes or None)
    times = []
    for _ in range(epochs):
        start = time.perf_counter()
        for _ in loader:
            time.sleep(step_seconds)
        times.append(time.perf_counter() - start)
    peak_mib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"queue_bytes {loader.queue_bytes / 2**20:>9.0f} MiB   peak RSS {peak_mib:6.0f} MiB   "
          f"epoch seconds {' '.join(f'{t:.2f}' for t in times)}", flush=True)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--step-seconds", type=float, default=0.03)
    parser.add_argument("--epochs", type=int, default=2)
    parser.add_argument("--queue-bytes", type=int, nargs="+", default=[2**40, 0, 2**26])
    parser.add_argument("--one", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.one is not None:
        one_run(args.one, args.step_seconds, args.epochs)
        return
    for queue_bytes in args.queue_bytes:
        subprocess.run([sys.executable, __file__, "--one", str(queue_bytes), "--step-seconds",
                        str(args.step_seconds), "--epochs", str(args.epochs)], check=True)


if __name__ == "__main__":
    main()
