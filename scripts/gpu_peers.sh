#!/usr/bin/env bash
# Source this on the GPU machine (carry .gpu-peers, filled by
# scripts/prepare_gpu_peers.sh) before a benchmark with a PyG row:
#
#   . scripts/gpu_peers.sh
#
# Builds torch-scatter and torch-sparse from their sources against the
# image's Python and torch, CPU-only (PyG samples on the host), in
# /tmp/gpu-peers-src and puts both on PYTHONPATH; a second run on the same
# machine reuses the build. Each package is a handful of extensions that
# setuptools compiles one after another by default (pip wheel took over 350 s
# for torch-scatter alone): build_ext -j compiles them side by side, and the
# two packages build at once.
# Prints each build's time; a build that fails is reported with its log's
# tail and leaves PYTHONPATH as it was, so that the benchmark's PyG row
# records PyG's own refusal. GPU_PEERS_PYTHON names another interpreter
# (a rehearsal off the GPU machine).
gpu_peers_repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
gpu_peers_src=/tmp/gpu-peers-src
gpu_peers_python=${GPU_PEERS_PYTHON:-python3}
gpu_peers_ok=1
gpu_peers_path=""
gpu_peers_names="torch_scatter-2.1.2 torch_sparse-0.6.18"

# Builds one package in place; its status is the build's.
gpu_peers_build() {
  local name=$1 started
  started=$(date +%s)
  rm -rf "${gpu_peers_src:?}/$name"
  mkdir -p "$gpu_peers_src"
  if tar -xzf "$gpu_peers_repo/.gpu-peers/$name.tar.gz" -C "$gpu_peers_src" &&
    (cd "$gpu_peers_src/$name" && FORCE_ONLY_CPU=1 MAX_JOBS=$(nproc) \
      "$gpu_peers_python" setup.py build_ext --inplace -j "$(nproc)") \
      >"/tmp/gpu-peers-$name.log" 2>&1; then
    touch "$gpu_peers_src/$name/.built"
    echo "gpu_peers: built $name in $(($(date +%s) - started)) s"
  else
    echo "gpu_peers: building $name FAILED after $(($(date +%s) - started)) s:"
    tail -n 30 "/tmp/gpu-peers-$name.log"
    return 1
  fi
}

# Both at once: neither needs the other to build.
gpu_peers_jobs=()
for gpu_peers_name in $gpu_peers_names; do
  gpu_peers_path=$gpu_peers_src/$gpu_peers_name${gpu_peers_path:+:$gpu_peers_path}
  [ -f "$gpu_peers_src/$gpu_peers_name/.built" ] && continue
  gpu_peers_build "$gpu_peers_name" &
  gpu_peers_jobs+=($!)
done
for gpu_peers_job in "${gpu_peers_jobs[@]}"; do
  wait "$gpu_peers_job" || gpu_peers_ok=0
done
if [ $gpu_peers_ok -eq 1 ]; then
  export PYTHONPATH=$gpu_peers_path${PYTHONPATH:+:$PYTHONPATH}
  "$gpu_peers_python" -c 'import torch_sparse, torch_scatter; print("gpu_peers: torch_sparse", torch_sparse.__version__, "and torch_scatter", torch_scatter.__version__, "import")' ||
    echo "gpu_peers: torch_sparse does not import"
fi
unset gpu_peers_repo gpu_peers_src gpu_peers_python gpu_peers_ok gpu_peers_path gpu_peers_name gpu_peers_names gpu_peers_jobs gpu_peers_job
unset -f gpu_peers_build
