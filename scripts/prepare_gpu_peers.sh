#!/usr/bin/env bash
# Downloads, on this build machine, the sources of the two packages PyG's
# NeighborLoader needs to sample (it refuses without pyg-lib or torch-sparse:
# "'NeighborSampler' requires either 'pyg-lib' or 'torch-sparse'", seen on the
# GPU image 2026-11-27) into the git-ignored .gpu-peers/. PyPI has neither as
# a wheel for the image's Python 3.12 and torch 2.11 (pyg-lib not at all), so
# scripts/gpu_peers.sh builds them there, CPU-only: PyG samples on the host
# and moves the batches to the GPU. Pinned by version and SHA-256. Idempotent.
#   scripts/prepare_gpu_peers.sh
set -euo pipefail
cd "$(dirname "$0")/.."
dest=.gpu-peers
mkdir -p "$dest"
# name  url  sha256
sources=(
  "torch_scatter-2.1.2.tar.gz https://files.pythonhosted.org/packages/f5/ab/2a44ecac0f891dd0d765fc59ac8d277c6283a31907626560e72685df2ed6/torch_scatter-2.1.2.tar.gz 69b3aa435f2424ac6a1bfb6ff702da6eb73b33ca0db38fb26989c74159258e47"
  "torch_sparse-0.6.18.tar.gz https://files.pythonhosted.org/packages/42/e2/cddf10a8e32a0b214918943e6173672c8ec11000e69c36dad8e6b141cb60/torch_sparse-0.6.18.tar.gz 2f14c510a6e93f404c6ea357210615b3c15a71731f9dbd86f25434e34fb5a741"
)
for entry in "${sources[@]}"; do
  read -r name url sha <<<"$entry"
  if [ -f "$dest/$name" ] && echo "$sha  $dest/$name" | sha256sum -c --quiet - 2>/dev/null; then
    echo "$dest/$name: already there"
    continue
  fi
  curl -fsSL -o "$dest/$name.part" "$url"
  if ! echo "$sha  $dest/$name.part" | sha256sum -c --quiet -; then
    rm -f "$dest/$name.part"
    echo "prepare_gpu_peers: $name does not have the pinned SHA-256 $sha" >&2
    exit 1
  fi
  mv "$dest/$name.part" "$dest/$name"
  echo "$dest/$name: downloaded"
done
