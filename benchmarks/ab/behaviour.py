#!/usr/bin/env python3
"""Runs two bulkgnn binaries on the same sampling and training jobs and
compares what they produce: sample digests, per-epoch losses and accuracies.

A refactoring that must not change behaviour passes only if every line
matches bit for bit (floats are compared as the JSON metrics print them,
which is the shortest text that reads back as the same float).

    benchmarks/ab/behaviour.py --old /path/to/old/bulkgnn --new build/tools/bulkgnn \
        --data ../shared/data [--out behaviour.txt]

Exits 1 on the first difference report (all jobs still run), 2 on a job that
fails. Training losses also depend on the CPU model (GEMM bits), so compare
binaries on one machine.
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile

DATASETS = ["cora", "facebook", "amazon-photo", "coauthor-cs"]


def sample_jobs():
    for name in DATASETS + ["soc-slashdot0902"]:
        yield f"sample {name} sage", [name, "--sampler", "sage", "--epochs", "2"]
    yield "sample cora sage replace", ["cora", "--replace", "--epochs", "2"]
    yield "sample facebook sage bulk7 t1", ["facebook", "--bulk", "7", "--threads", "1"]
    for sampler in ["ladies", "fastgcn"]:
        for name in ["cora", "coauthor-cs"]:
            yield f"sample {name} {sampler}", [name, "--sampler", sampler, "--fanouts",
                                               "512,512", "--batch-size", "256"]
    yield "sample cora reference", ["cora", "--backend", "reference"]
    yield "sample cora ladies reference", ["cora", "--sampler", "ladies", "--fanouts", "256,256",
                                           "--backend", "reference"]


def mpi_sample_jobs():
    for grid, ranks, extra in [("replicated", 2, []), ("1.5d", 4, ["--replication", "2"]),
                               ("2d", 4, []), ("3d", 8, ["--replication", "2"])]:
        yield f"mpi{ranks} sample facebook sage {grid}", ranks, [
            "facebook", "--grid", grid, *extra]
    yield "mpi2 sample cora ladies", 2, ["cora", "--sampler", "ladies", "--fanouts", "256,256"]
    yield "mpi3 sample coauthor-cs ladies", 3, [
        "coauthor-cs", "--sampler", "ladies", "--fanouts", "512,512", "--batch-size", "256"]
    yield "mpi2 sample cora fastgcn", 2, ["cora", "--sampler", "fastgcn", "--fanouts", "256,256"]


def train_jobs():
    for name in DATASETS:
        yield f"train {name} sage", [name, "--epochs", "3"]
    yield "train cora ladies", ["cora", "--sampler", "ladies", "--fanouts", "512,512",
                                "--epochs", "3"]
    yield "train amazon-photo row-norm", ["amazon-photo", "--epochs", "2",
                                          "--normalize-features", "row"]
    yield "train cora reference", ["cora", "--epochs", "1", "--backend", "reference",
                                   "--hidden", "32"]
    yield "train coauthor-cs t1 eval sampled", ["coauthor-cs", "--epochs", "2", "--threads", "1",
                                                "--eval", "sampled"]


def mpi_train_jobs():
    yield "mpi2 train cora sage", 2, ["cora", "--epochs", "2"]
    yield "mpi4 train facebook 2d", 4, ["facebook", "--epochs", "1", "--grid", "2d"]
    yield "mpi2 train cora ladies", 2, ["cora", "--sampler", "ladies", "--fanouts", "512,512",
                                        "--epochs", "2"]
    yield "mpi4 train facebook ladies 1.5d", 4, ["facebook", "--sampler", "ladies", "--fanouts",
                                                 "512,512", "--epochs", "1", "--grid", "1.5d",
                                                 "--replication", "2"]


def run(binary, command, args, data, ranks, workdir):
    metrics = os.path.join(workdir, "metrics.json")
    args = [os.path.join(data, args[0])] + args[1:]
    cmd = [binary, command, *args, "--quiet", "--metrics-out", metrics]
    if ranks:
        cmd = ["mpirun", "--allow-run-as-root", "--oversubscribe", "-np", str(ranks), *cmd]
    done = subprocess.run(cmd, cwd=workdir, capture_output=True, text=True)
    if done.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} exited {done.returncode}:\n{done.stderr[-2000:]}")
    with open(metrics) as f:
        result = json.load(f)
    if command == "sample":
        return f"digest {result['digest']} minibatches {result['minibatches']}"
    epochs = " ".join(f"[{e['loss']!r} {e['train_acc']!r} {e['valid_acc']!r}]"
                      for e in result["epochs"])
    return f"{epochs} test {result['final'].get('test_acc')!r}"


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--old", required=True)
    parser.add_argument("--new", required=True)
    parser.add_argument("--data", required=True)
    parser.add_argument("--out")
    parser.add_argument("--no-mpi", action="store_true")
    parser.add_argument("--only", help="run only the jobs whose name contains this text")
    options = parser.parse_args()
    for path in [options.old, options.new]:
        if not os.access(path, os.X_OK):
            sys.exit(f"behaviour.py: {path} is not an executable")
    for name in DATASETS:
        if not os.path.isdir(os.path.join(options.data, name)):
            sys.exit(f"behaviour.py: dataset {name} not found under {options.data}")

    jobs = [("sample", n, 0, a) for n, a in sample_jobs()]
    jobs += [("train", n, 0, a) for n, a in train_jobs()]
    if not options.no_mpi:
        jobs += [("sample", n, r, a) for n, r, a in mpi_sample_jobs()]
        jobs += [("train", n, r, a) for n, r, a in mpi_train_jobs()]

    if options.only:
        jobs = [job for job in jobs if options.only in job[1]]

    lines, differences = [], 0
    with tempfile.TemporaryDirectory() as workdir:
        for command, name, ranks, args in jobs:
            try:
                old = run(options.old, command, args, options.data, ranks, workdir)
                new = run(options.new, command, args, options.data, ranks, workdir)
            except RuntimeError as failure:
                print(f"FAILED {name}: {failure}", file=sys.stderr)
                sys.exit(2)
            same = old == new
            differences += not same
            line = f"{'same' if same else 'DIFFERENT'}  {name}: {new}"
            if not same:
                line += f"\n      old: {old}"
            print(line, flush=True)
            lines.append(line)
    summary = f"{len(jobs) - differences} of {len(jobs)} jobs identical"
    print(summary)
    if options.out:
        with open(options.out, "w") as f:
            f.write("\n".join(lines + [summary]) + "\n")
    sys.exit(1 if differences else 0)


if __name__ == "__main__":
    main()
