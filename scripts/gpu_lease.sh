#!/usr/bin/env bash
# One full call of the GPU machine: the check, then the GPU benchmarks, inside
# one time budget, so that a short lease is spent in one call. On the GPU
# machine the device tool runs
#   scripts/gpu_lease.sh $OUT [SECONDS]     (carry: [".gpu-deps", ".gpu-data", ".gpu-peers"])
# after scripts/prepare_gpu_deps.sh, prepare_gpu_data.sh and
# prepare_gpu_peers.sh filled those folders on the build machine.
#
# In order, each bounded by what is left of SECONDS (default 560, inside the
# tool's 600 s a call):
#   - torch-scatter and torch-sparse build in the background, at low priority
#     (scripts/gpu_peers.sh), for the PyG row of the training sweep;
#   - scripts/gpu_check.sh --quick (build, gpu tests, memcheck, racecheck,
#     GPU benchmarks) with about half of the budget;
#   - benchmarks/gpu/train_sweep.py on the products-sized R-MAT and facebook;
#   - benchmarks/gpu/sweep.py on the products-sized R-MAT with what is left.
# Everything comes back in at most five files under OUT (the tool returns at
# most eight): check/summary.txt, check/logs.tar.gz and bench.tar.gz (every
# benchmark's table, JSON and log), plus the two logs.
set -uo pipefail

[ $# -ge 1 ] && [ $# -le 2 ] || { echo "usage: scripts/gpu_lease.sh OUT_DIR [SECONDS]" >&2; exit 2; }
repo=$(cd "$(dirname "$0")/.." && pwd)
mkdir -p "$1"
out=$(cd "$1" && pwd)
total=${2:-560}
started=$(date +%s)
cd "$repo"
cli=$repo/build-gpu-check/tools/bulkgnn
bench=$out/bench
mkdir -p "$bench"

left() { echo $((started + total - $(date +%s))); }
stamp() { echo "gpu_lease: $(($(date +%s) - started)) s: $*"; }

pack() {
  tar -czf "$out/bench.tar.gz" -C "$bench" . 2>/dev/null
}

# In a process group of its own: a kill must reach the compilers too (a
# leftover compile took the cores from the first lease's training rows).
stamp "peers build started in the background"
setsid nice -n 15 bash -c ". scripts/gpu_peers.sh" >"$bench/peers.log" 2>&1 &
peers=$!

stamp "check"
scripts/gpu_check.sh --quick --budget $((total / 2)) "$out/check" >"$out/check.log" 2>&1
stamp "check exit $?"
cat "$out/check/summary.txt" 2>/dev/null | sed -n '/^step/,/^$/p'

# The sweep needs the peers; they share the cores with the check's build.
while kill -0 "$peers" 2>/dev/null && [ "$(left)" -gt 200 ]; do sleep 2; done
stamp "peers: $(grep -h '^gpu_peers' "$bench/peers.log" | paste -sd';')"

if [ ! -x "$cli" ]; then
  stamp "no CLI was built: no benchmarks"
  pack
  exit 1
fi
# Named: a sourced script would take this script's OUT_DIR for its argument.
. scripts/gpu_env.sh build-gpu-check
if kill -0 "$peers" 2>/dev/null; then
  kill -- -"$peers"
  stamp "peers build unfinished: the PyG row records PyG's refusal"
else
  . scripts/gpu_peers.sh >>"$bench/peers.log" 2>&1
fi

budget=$(($(left) * 2 / 3 - 30))
stamp "train sweep, budget $budget s"
timeout --kill-after=5 $((budget + 60)) python3 benchmarks/gpu/train_sweep.py --cli "$cli" \
  --graph products --data .gpu-data/facebook --out "$bench/train" --budget "$budget" \
  --minibatches 20 --epochs 2 >"$bench/train.log" 2>&1
stamp "train sweep exit $?"
pack

budget=$(($(left) - 40))
if [ "$budget" -gt 60 ]; then
  stamp "sampling sweep, budget $budget s"
  timeout --kill-after=5 $((budget + 25)) python3 benchmarks/gpu/sweep.py --cli "$cli" \
    --graph products --out "$bench/sample" --budget "$budget" >"$bench/sample.log" 2>&1
  stamp "sampling sweep exit $?"
fi
pack
tail -n 30 "$bench/train.log"
tail -n 30 "$bench/sample.log" 2>/dev/null
stamp "done"
