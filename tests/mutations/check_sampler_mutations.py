#!/usr/bin/env python3
"""Checks that the sampler tests can fail: each mutation below breaks a sampler
in a small way that compares-two-paths tests cannot see (both paths share the
broken code), and the statistical tests must catch every one.

For each mutation, in a scratch copy of the working tree (never the tree
itself): apply it, rebuild the statistical tests, run them, and expect a
failure. The unmutated copy must pass first. A mutation whose text no longer
matches the source is an error, not a pass: update it with the code.

    tests/mutations/check_sampler_mutations.py [--only NAME] [--keep DIR]

Builds with the cpu-release preset (ccache makes the second run fast); takes
about a minute per mutation on 2 cores after the first build. Run it before
resolving a sampler issue, and add a mutation for every sampler added.
"""
import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
ROW_STREAMS = "kernels/include/bulkgnn/kernels/sample_rows.hpp"
KEY_LINE = ("return {seed, epoch, minibatch_of_row[i], layer, "
            "static_cast<std::uint32_t>(row)};")


def key_without(field, zeroed):
    """row_streams::key with one field of the key zeroed."""
    return (ROW_STREAMS, KEY_LINE, KEY_LINE.replace(field, zeroed, 1))


# name: (file, text, replacement, what it breaks)
MUTATIONS = {
    "destination-key": (*key_without("static_cast<std::uint32_t>(row)",
                                     "static_cast<std::uint32_t>(row) * 0u"),
                        "every destination of a minibatch draws from one stream"),
    "hop-key": (*key_without("layer,", "0u * layer,"),
                "every hop draws the same positions for a vertex"),
    "minibatch-key": (*key_without("minibatch_of_row[i]", "0u * minibatch_of_row[i]"),
                      "every minibatch draws the same positions for a vertex"),
    "epoch-key": (*key_without("{seed, epoch,", "{seed, 0u * epoch,"),
                  "every epoch draws the same"),
    "seed-key": (*key_without("{seed,", "{0u * seed,"),
                 "every seed draws the same"),
    "layer-wise-with-replacement": (
        "sampler/layer_wise/layer_wise_sampling.cpp",
        ".mode = kernels::replacement::without,",
        ".mode = kernels::replacement::with,",
        "LADIES and FastGCN draw columns with replacement"),
    "weights-raised-on-a-quarter": (
        "kernels/cpu/sample_rows.cpp",
        "local.keys[e] = {rng.exponential() / static_cast<double>(weights[e]), e};",
        "local.keys[e] = {rng.exponential() / (static_cast<double>(weights[e]) *"
        " (e % 4 == 0 ? 1.05 : 1.0)), e};",
        "weighted draws favour every fourth entry by 5%"),
    "one-position-raised": (
        "kernels/cpu/sample_rows.cpp",
        "    const std::uint32_t t = rng.uniform_below(j + 1);\n    bool taken = false;",
        "    std::uint32_t t = rng.uniform_below(j + 1);\n"
        "    if (t == 1 && rng.uniform_below(10) == 0) t = 0;\n    bool taken = false;",
        "node-wise draws favour the first neighbour (about +6%)"),
    "uniform-with-replacement-favours-the-first": (
        "kernels/cpu/sample_rows.cpp",
        "for (auto& p : local.positions) p = rng.uniform_below(degree);",
        "for (auto& p : local.positions) p = rng.uniform_below(degree + 1) % degree;",
        "draws with replacement take position 0 twice as often"),
    "weighted-with-replacement-favours-the-last": (
        "kernels/cpu/sample_rows.cpp",
        "const double target = rng.uniform_open01() * total;",
        "const double target = rng.uniform_open01() * total * 1.02;",
        "weighted draws with replacement give the last entry 2% of the total more"),
    "labor-variates-per-destination": (
        ROW_STREAMS,
        "  key.row = static_cast<std::uint32_t>(t);\n",
        "  key.row ^= static_cast<std::uint32_t>(t);\n",
        "LABOR's destinations draw their own variates instead of sharing them"),
    "labor-threshold-raised": (
        "kernels/cpu/sample_rows.cpp",
        "shared_variate(streams.key(static_cast<std::size_t>(i), rows), t) < threshold;",
        "shared_variate(streams.key(static_cast<std::size_t>(i), rows), t) < threshold * 1.05;",
        "LABOR keeps each neighbour 5% more often"),
    "labor-importance-step-does-nothing": (
        "kernels/cpu/sample_rows.cpp",
        "stepped_[t] = importance_[t] * largest_[t];",
        "stepped_[t] = importance_[t];",
        "LABOR-i's importance steps leave the importances as they are"),
    "labor-importance-scale-raised": (
        "kernels/include/bulkgnn/kernels/rules/labor_importance.hpp",
        "double c = k / total;",
        "double c = 1.1 * k / total;",
        "LABOR-i's rows keep 10% more than their fanout"),
    "walk-steps-share-a-stream": (
        "sampler/random_walk/random_walk_sampling.cpp",
        "walk_stream_layer(hop, static_cast<std::uint32_t>(s), w)",
        "walk_stream_layer(hop, 0u * static_cast<std::uint32_t>(s), w)",
        "every step of a walk draws the same position"),
    "walks-share-a-stream": (
        "sampler/random_walk/random_walk_sampling.cpp",
        "walk_stream_layer(hop, static_cast<std::uint32_t>(s), w)",
        "walk_stream_layer(hop, static_cast<std::uint32_t>(s), 0u * w)",
        "every walk from a vertex takes the same path"),
    "shadow-reach-one-hop-short": (
        "sampler/shadow/shadow_sampling.cpp",
        "reached.layers.back().sources",
        "reached.layers.front().sources",
        "ShaDow induces its subgraph on the first hop's vertices only"),
    "shadow-self-loops": (
        "sampler/src/induced_subgraph_sampling.cpp",
        "vertices, ones, false)",
        "vertices, ones, true)",
        "ShaDow's and Cluster-GCN's subgraphs gain self loops that A does not hold"),
    "shadow-untrimmed": (
        "sampler/src/induced_subgraph_sampling.cpp",
        "restrict_to_seeds(on_subgraph(induced, vertices, seeds, j, layers), 0, seeds.size(j))",
        "on_subgraph(induced, vertices, seeds, j, layers)",
        "ShaDow and Cluster-GCN keep rows that their seeds never read"),
    "cluster-batches-ignore-the-epoch": (
        "sampler/cluster/vertex_clusters.cpp",
        "detail::shuffle_for_epoch(u.units, seed, epoch);",
        "detail::shuffle_for_epoch(u.units, seed, 0u * epoch);",
        "every epoch batches the same clusters together"),
    "shuffle-is-sattolos": (
        "sampler/src/epoch_shuffle.hpp",
        "rng.uniform_below(static_cast<std::uint32_t>(i + 1))",
        "rng.uniform_below(static_cast<std::uint32_t>(i))",
        "the epoch shuffle draws cyclic permutations only (no item stays in place)"),
    "cluster-seedless-clusters-dropped": (
        "sampler/cluster/vertex_clusters.cpp",
        "u.units[unit].push_back(c);",
        "(void)unit;",
        "clusters without seeds are never batched"),
    "planned-subgraph-seeds-only": (
        "sampler/src/induced_subgraph_sampling.cpp",
        "vertices.push_segment(segment);",
        "vertices.push_segment(mine);",
        "Cluster-GCN's and GraphSAINT's subgraphs hold their seeds and not the rest"),
    "pinsage-termination-ignored": (
        "sampler/random_walk/pinsage_sampling.cpp",
        "if (rng.uniform_below(100) < termination_percent_) continue;",
        "if (rng.uniform_below(100) < 0u * termination_percent_) continue;",
        "PinSAGE's walks never end early"),
    "pinsage-walks-share-a-stream": (
        "sampler/random_walk/pinsage_sampling.cpp",
        "static_cast<std::uint32_t>(w)};",
        "0u * static_cast<std::uint32_t>(w)};",
        "every PinSAGE walk from a vertex takes the same path"),
    "pinsage-termination-shares-the-step-stream": (
        "sampler/random_walk/pinsage_sampling.cpp",
        "walk_stream_layer(key.hop, pinsage_termination_step + key.step, key.walk)",
        "walk_stream_layer(key.hop, key.step, key.walk)",
        "a PinSAGE walk's termination draw is its step's draw"),
    "saint-node-draws-uniform-vertices": (
        "sampler/saint/saint_subgraphs.cpp",
        "vertices.push_back(row_of_entry(graph_, uniform_index_below(rng, g.nnz())));",
        "vertices.push_back(static_cast<vertex_t>(uniform_index_below(rng, g.rows)));",
        "GraphSAINT's node draws ignore the degree"),
    "saint-edge-draws-uniform-edges": (
        "sampler/saint/saint_subgraphs.cpp",
        "total += inverse_degree(v) + inverse_degree(graph_.indices.data()[e]);",
        "total += 1.0;",
        "GraphSAINT's edge draws ignore the degrees of their ends"),
    "saint-walks-share-a-step": (
        "sampler/saint/saint_subgraphs.cpp",
        "at = g.column_at(g.first_entry(at) + uniform_index_below(rng, degree));",
        "at = g.column_at(g.first_entry(at) + (step + i) % degree);",
        "GraphSAINT's walks step to a fixed neighbour"),
    "saint-aggregation-by-the-neighbours-count": (
        "sampler/saint/saint_subgraphs.cpp",
        "const double ratio = together > 0 ? std::min(count / together, double{max_ratio})",
        "const double ratio = together > 0 ? std::min(static_cast<double>(vertex_counts_["
        "g.column_at(e)]) / together, double{max_ratio})",
        "GraphSAINT's aggregation weight takes the count of the edge's other end (PyG's)"),
    "saint-loss-unweighted": (
        "sampler/saint/saint_subgraphs.cpp",
        "(std::max(count, double{unseen_ratio}) * n));",
        "(double{unseen_ratio} * n));",
        "GraphSAINT's loss weights ignore how often a vertex is drawn"),
    "saint-presample-short-of-its-coverage": (
        "sampler/saint/saint_subgraphs.cpp",
        "static_cast<double>(settings_.coverage) * static_cast<double>(g.rows);",
        "0.9 * static_cast<double>(settings_.coverage) * static_cast<double>(g.rows);",
        "GraphSAINT's presampling stops before its coverage"),
    "program-selection-scale-swapped": (
        "sampler/program/program_sampling.cpp",
        ".pattern = step.scale == selection_scale::one};",
        ".pattern = step.scale != selection_scale::one};",
        "a sampler program's frontier_selection weighs 1 where asked for LADIES' weights"),
    "program-draws-keyed-by-hop-zero": (
        "sampler/program/program_sampling.cpp",
        "rows.streams(c.options.seed, state.epoch, state.hop)",
        "rows.streams(c.options.seed, state.epoch, 0u * state.hop)",
        "a sampler program's per-minibatch draws share one stream over hops"),
}

TARGETS = ["sampler_test", "layer_wise_statistics_test", "cluster_gcn_test", "pinsage_test",
           "saint_test"]
TESTS = [["tests/sampler/sampler_test",
          "--gtest_filter=*Statistics*:ShadowSampler.*:SamplerProgram.*"],
         ["tests/sampler/layer_wise_statistics_test"],
         ["tests/sampler/cluster_gcn_test"],
         ["tests/sampler/pinsage_test"],
         ["tests/sampler/saint_test"]]


def run(command, cwd, log):
    with open(log, "a") as out:
        out.write(f"$ {' '.join(map(str, command))}\n")
        out.flush()
        return subprocess.run(command, cwd=cwd, stdout=out, stderr=subprocess.STDOUT).returncode


def failing_tests(build, log):
    """Names of the failed statistical tests, or [] if all passed."""
    failed = []
    for test in TESTS:
        done = subprocess.run([str(build / test[0]), *test[1:]], capture_output=True, text=True)
        with open(log, "a") as out:
            out.write(done.stdout + done.stderr)
        failed += [line.split()[3] for line in done.stdout.splitlines()
                   if line.startswith("[  FAILED  ]") and len(line.split()) > 3
                   and "." in line.split()[3]]
        if done.returncode != 0 and not failed:
            failed.append(f"{test[0]} (exit {done.returncode})")
    return sorted(set(failed))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", choices=sorted(MUTATIONS), action="append")
    parser.add_argument("--keep", type=Path, help="scratch folder to use and keep")
    args = parser.parse_args()
    scratch = args.keep or Path(tempfile.mkdtemp(prefix="bulkgnn-mutations-"))
    copy = scratch / "tree"
    log = scratch / "log.txt"
    print(f"mutations: scratch copy in {copy}, log in {log}")
    # The working tree as it is (tracked and untracked files, not ignored ones).
    files = subprocess.run(["git", "ls-files", "-co", "--exclude-standard", "-z"], cwd=REPO,
                           capture_output=True, check=True).stdout.split(b"\0")
    for name in filter(None, files):
        source, target = REPO / name.decode(), copy / name.decode()
        if source.is_file():
            target.parent.mkdir(parents=True, exist_ok=True)
            if not target.exists() or target.read_bytes() != source.read_bytes():
                shutil.copy2(source, target)
    build = copy / "build-cpu-release"
    if (run(["cmake", "--preset", "cpu-release", "-DBULKGNN_ENABLE_MPI=OFF"], copy, log) != 0):
        sys.exit(f"mutations: configuring the scratch copy failed (see {log})")

    def build_and_test():
        if run(["cmake", "--build", str(build), "--target", *TARGETS], copy, log) != 0:
            sys.exit(f"mutations: the build failed (see {log})")
        return failing_tests(build, log)

    started = time.monotonic()
    failed = build_and_test()
    if failed:
        sys.exit(f"mutations: the unmutated tree fails {failed}: fix that first")
    print(f"unmutated: the statistical tests pass ({time.monotonic() - started:.0f} s)")
    missed = []
    for name in args.only or MUTATIONS:
        path, text, replacement, what = MUTATIONS[name]
        target = copy / path
        original = target.read_text()
        if original.count(text) < 1:
            sys.exit(f"mutations: '{name}' no longer applies: {path} has no\n{text}\n"
                     "update the mutation with the code")
        started = time.monotonic()
        target.write_text(original.replace(text, replacement))
        try:
            failed = build_and_test()
        finally:
            target.write_text(original)
            os.utime(target)
        verdict = f"caught by {', '.join(failed)}" if failed else "NOT CAUGHT"
        print(f"{name} ({what}): {verdict} ({time.monotonic() - started:.0f} s)")
        if not failed:
            missed.append(name)
    if not args.keep:
        shutil.rmtree(scratch, ignore_errors=True)
    if missed:
        sys.exit(f"mutations: the tests missed {', '.join(missed)}")
    print("mutations: every mutation was caught")


if __name__ == "__main__":
    main()
