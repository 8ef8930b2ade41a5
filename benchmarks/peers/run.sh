#!/usr/bin/env bash
# The one command: bulkgnn side by side with PyTorch Geometric and DGL.
#
#   benchmarks/peers/run.sh [--quick] [run_peers.py options]
#
# Creates the pinned peer environment if needed (setup_venv.sh; PyPI only, outside the
# repo), checks that bulkgnn is built (scripts/build.sh, BULKGNN_BUILD_BENCHMARKS on),
# checks the Python adapters with the real PyG and DGL (check_adapters.py),
# then runs every workload for every system (run_peers.py) and writes
# benchmarks/peers/results/ and the table in benchmarks/README.md (report.py).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
build=${BULKGNN_BUILD_DIR:-$repo/build}
if [[ ! -x "$build/tools/bulkgnn" || ! -x "$build/benchmarks/loader_throughput" ]]; then
  echo "bulkgnn is not built in $build: run scripts/build.sh" >&2
  exit 1
fi
venv=$("$here/setup_venv.sh" | tail -n 1)
export OMP_NUM_THREADS=2 MKL_NUM_THREADS=2 OPENBLAS_NUM_THREADS=2
# mb.to_pyg() and mb.to_dgl() must mean to the real PyG and DGL what they claim to
# before any number is taken with them.
PYTHONPATH="$build/python" "$venv/bin/python" "$here/check_adapters.py" \
  "$repo/../shared/data/cora" "$repo/../shared/data/facebook"
exec "$venv/bin/python" "$here/run_peers.py" --build "$build" "$@"
