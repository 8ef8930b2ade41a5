#!/usr/bin/env bash
# Source this on the GPU machine (carry .gpu-peers, filled by
# scripts/prepare_gpu_peers.sh) before a benchmark with a PyG row:
#
#   . scripts/gpu_peers.sh
#
# Builds torch-scatter and torch-sparse from their sources against the
# image's Python and torch, CPU-only (PyG samples on the host), with every
# core, installs them into /tmp/gpu-peers-site and puts that on PYTHONPATH;
# a second run on the same machine reuses the build. Prints each build's time;
# a build that fails is reported with its log's tail and leaves PYTHONPATH as
# it was, so that the benchmark's PyG row records PyG's own refusal.
gpu_peers_repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
gpu_peers_site=/tmp/gpu-peers-site
gpu_peers_ok=1
if [ ! -f "$gpu_peers_site/.built" ]; then
  mkdir -p /tmp/gpu-peers-wheels "$gpu_peers_site"
  for gpu_peers_name in torch_scatter-2.1.2 torch_sparse-0.6.18; do
    gpu_peers_started=$(date +%s)
    if FORCE_ONLY_CPU=1 MAX_JOBS=$(nproc) python3 -m pip wheel -q --no-deps --no-build-isolation \
      --no-index -w /tmp/gpu-peers-wheels "$gpu_peers_repo/.gpu-peers/$gpu_peers_name.tar.gz" \
      >"/tmp/gpu-peers-$gpu_peers_name.log" 2>&1 &&
      python3 -m pip install -q --no-deps --no-index --target "$gpu_peers_site" \
        /tmp/gpu-peers-wheels/"${gpu_peers_name%%-*}"-*.whl >>"/tmp/gpu-peers-$gpu_peers_name.log" 2>&1; then
      echo "gpu_peers: built $gpu_peers_name in $(($(date +%s) - gpu_peers_started)) s"
    else
      echo "gpu_peers: building $gpu_peers_name FAILED after $(($(date +%s) - gpu_peers_started)) s:"
      tail -n 30 "/tmp/gpu-peers-$gpu_peers_name.log"
      gpu_peers_ok=0
      break
    fi
  done
  [ $gpu_peers_ok -eq 1 ] && touch "$gpu_peers_site/.built"
fi
if [ $gpu_peers_ok -eq 1 ]; then
  export PYTHONPATH=$gpu_peers_site${PYTHONPATH:+:$PYTHONPATH}
  python3 -c 'import torch_sparse, torch_geometric; print("gpu_peers: torch_sparse", torch_sparse.__version__, "with torch_geometric", torch_geometric.__version__)' ||
    echo "gpu_peers: torch_sparse does not import"
fi
unset gpu_peers_repo gpu_peers_site gpu_peers_ok gpu_peers_name gpu_peers_started
