#!/usr/bin/env bash
# Epoch time, stage breakdown, overlap, GEMM efficiency and peak memory of
# `bulkgnn train` (GraphSAGE 15,10,5, hidden 256, batch 1024, 2 threads) on
# facebook and on an R-MAT scale-20 graph with 128 random features and 32
# classes; then peak resident memory against bulk size and queue depth.
#
#   benchmarks/trainer/run_epoch_bench.sh [OUT_DIR]
#
# Environment: BULKGNN (default build/tools/bulkgnn), GEMM_EFFICIENCY (default
# build/benchmarks/gemm_efficiency), DATA (default ../shared/data),
# BULKGNN_BENCH_CACHE (default /tmp/bulkgnn-bench-cache, for the R-MAT graph),
# RMAT_MINIBATCHES (minibatches per R-MAT epoch; default 0 = the whole epoch).
set -euo pipefail

bulkgnn=${BULKGNN:-build/tools/bulkgnn}
gemm_efficiency=${GEMM_EFFICIENCY:-build/benchmarks/gemm_efficiency}
data=${DATA:-../shared/data}
cache=${BULKGNN_BENCH_CACHE:-/tmp/bulkgnn-bench-cache}
rmat_minibatches=${RMAT_MINIBATCHES:-0}
out=${1:-/tmp/bulkgnn-epoch-bench}
mkdir -p "$out" "$cache"

for tool in "$bulkgnn" "$gemm_efficiency"; do
  [ -x "$tool" ] || { echo "run_epoch_bench: $tool not built (scripts/build.sh)" >&2; exit 1; }
done
[ -d "$data/facebook" ] || { echo "run_epoch_bench: $data/facebook not found" >&2; exit 1; }

rmat=$cache/rmat-s20-e16-u-f128-c32
if [ ! -f "$rmat/manifest.json" ]; then
  "$bulkgnn" generate rmat "$rmat" --scale 20 --edge-factor 16 --undirected --features 128 \
    --classes 32 --quiet
fi

common=(--fanouts 15,10,5 --hidden 256 --batch-size 1024 --threads 2 --quiet)

run() {  # name, then train arguments
  local name=$1
  shift
  echo "== $name: $bulkgnn train $*" >&2
  /usr/bin/time -v -o "$out/$name.time" "$bulkgnn" train "$@" --metrics-out "$out/$name.json" \
    > "$out/$name.log"
}

run facebook "$data/facebook" "${common[@]}" --epochs 3 --eval-every 3
run facebook-ladies "$data/facebook" --sampler ladies --fanouts 4096,4096,4096 --hidden 256 \
  --batch-size 1024 --threads 2 --quiet --epochs 3 --eval-every 3
run rmat "$rmat" "${common[@]}" --epochs 1 --eval-every 0 --max-minibatches "$rmat_minibatches"
run rmat-ladies "$rmat" --sampler ladies --fanouts 4096,4096,4096 --hidden 256 --batch-size 1024 \
  --threads 2 --quiet --epochs 1 --eval-every 0 --max-minibatches "$rmat_minibatches"

# Peak memory against bulk size (ready queue fixed) and queue depth (bulk
# fixed), on facebook at batch 256 (53 minibatches an epoch), where the
# minibatch buffers rather than the dataset dominate.
for bulk in 4 16 64; do
  run "mem-bulk$bulk" "$data/facebook" --fanouts 15,10,5 --hidden 256 --batch-size 256 \
    --threads 2 --quiet --epochs 1 --eval-every 0 --bulk "$bulk" --bulk-queue 2 --ready-queue 8
done
for queue in 2 8 32; do
  run "mem-queue$queue" "$data/facebook" --fanouts 15,10,5 --hidden 256 --batch-size 256 \
    --threads 2 --quiet --epochs 1 --eval-every 0 --bulk 16 --bulk-queue 2 --ready-queue "$queue"
done

# OpenBLAS alone on the train step's GEMM shapes, next to what training got.
"$gemm_efficiency" "$data/facebook" > "$out/gemm-facebook.md"
"$gemm_efficiency" "$rmat" > "$out/gemm-rmat.md"

python3 "$(dirname "$0")/summarize_epochs.py" "$out"
