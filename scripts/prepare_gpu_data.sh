#!/usr/bin/env bash
# Native copies of the real datasets the GPU check needs (cora and facebook,
# about 29 MiB) in the git-ignored .gpu-data/, for the device tool to carry
# with the call: the GPU machine has no ../shared/data. scripts/gpu_check.sh
# points the gpu tests at them (BULKGNN_DATA), and benchmarks/gpu/
# train_sweep.py takes .gpu-data/facebook. The four datasets of the accuracy
# table go as they are (OGB raw, 31 MiB; native they would take 70) into the
# git-ignored .gpu-accuracy/, carried by the accuracy call alone (the tree
# that travels stays under 64 MiB), which converts them there
# (benchmarks/README.md). Idempotent; needs a built CLI (scripts/build.sh).
#   scripts/prepare_gpu_data.sh [CLI]     (default: build/tools/bulkgnn)
set -euo pipefail

repo=$(cd "$(dirname "$0")/.." && pwd)
cli=${1:-$repo/build/tools/bulkgnn}
shared=$repo/../shared/data
[ -x "$cli" ] || { echo "prepare_gpu_data: no CLI at $cli (run scripts/build.sh)" >&2; exit 1; }
[ -d "$shared" ] || { echo "prepare_gpu_data: $shared is missing" >&2; exit 1; }
convert_into() {
  local folder=$1 name=$2 out=$1/$2
  if [ -f "$out/manifest.json" ]; then
    echo "$out: already there"
    return
  fi
  rm -rf "$out"
  "$cli" convert "$shared/$name" "$out" --quiet
  echo "$out: converted from $shared/$name"
}
mkdir -p "$repo/.gpu-data" "$repo/.gpu-accuracy"
for name in cora facebook; do convert_into "$repo/.gpu-data" "$name"; done
for name in cora facebook amazon-photo coauthor-cs; do
  if [ -f "$repo/.gpu-accuracy/$name/meta.json" ]; then
    echo "$repo/.gpu-accuracy/$name: already there"
  else
    rm -rf "$repo/.gpu-accuracy/$name"
    cp -r "$shared/$name" "$repo/.gpu-accuracy/$name"
    echo "$repo/.gpu-accuracy/$name: copied from $shared/$name"
  fi
done
du -sh "$repo/.gpu-data" "$repo/.gpu-accuracy"
