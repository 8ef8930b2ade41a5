#!/usr/bin/env bash
# Native copies of the real datasets the GPU check needs (cora and facebook,
# about 29 MiB) in the git-ignored .gpu-data/, for the device tool to carry
# with the call: the GPU machine has no ../shared/data. scripts/gpu_check.sh
# points the gpu tests at them (BULKGNN_DATA), and benchmarks/gpu/
# train_sweep.py takes .gpu-data/facebook. Idempotent; needs a built CLI
# (scripts/build.sh).
#   scripts/prepare_gpu_data.sh [CLI]     (default: build/tools/bulkgnn)
set -euo pipefail

repo=$(cd "$(dirname "$0")/.." && pwd)
cli=${1:-$repo/build/tools/bulkgnn}
shared=$repo/../shared/data
[ -x "$cli" ] || { echo "prepare_gpu_data: no CLI at $cli (run scripts/build.sh)" >&2; exit 1; }
[ -d "$shared" ] || { echo "prepare_gpu_data: $shared is missing" >&2; exit 1; }
mkdir -p "$repo/.gpu-data"
for name in cora facebook; do
  out=$repo/.gpu-data/$name
  if [ -f "$out/manifest.json" ]; then
    echo "$out: already there"
    continue
  fi
  rm -rf "$out"
  "$cli" convert "$shared/$name" "$out" --quiet
  echo "$out: converted from $shared/$name"
done
du -sh "$repo/.gpu-data"
