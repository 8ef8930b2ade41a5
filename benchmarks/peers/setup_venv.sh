#!/usr/bin/env bash
# Creates (or completes) the Python environment that runs PyTorch Geometric and DGL for
# benchmarks/peers, from PyPI only, with the versions pinned in requirements*.txt.
# Idempotent: a finished environment is left alone (marker file holds the pins' hash).
#
#   benchmarks/peers/setup_venv.sh            # venv in ${BULKGNN_PEERS_VENV:-~/.cache/bulkgnn-peers-venv}
#
# Prints the venv path on its last line. Nothing in the tests or CI needs it.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
venv=${BULKGNN_PEERS_VENV:-$HOME/.cache/bulkgnn-peers-venv}
python=${BULKGNN_PEERS_PYTHON:-python3}
pins_hash=$(cat "$here/requirements.txt" "$here/requirements-sdist.txt" | sha256sum | cut -c1-16)
marker="$venv/.bulkgnn-peers-$pins_hash"

if [[ -f "$marker" ]]; then
  echo "peer environment ready: $venv" >&2
  echo "$venv"
  exit 0
fi

echo "creating peer environment in $venv (PyPI, pinned versions; first time takes minutes)" >&2
[[ -x "$venv/bin/python" ]] || "$python" -m venv "$venv"
"$venv/bin/python" -m pip install --quiet --upgrade pip==24.0 setuptools==69.2.0 wheel==0.43.0
"$venv/bin/python" -m pip install --quiet -r "$here/requirements.txt"
# torch-scatter/torch-sparse compile against the installed torch: no build isolation, CPU
# only, both cores. This is the slow step (about 10-20 minutes on 2 cores).
FORCE_CUDA=0 MAX_JOBS=$(nproc) "$venv/bin/python" -m pip install --quiet --no-build-isolation \
  -r "$here/requirements-sdist.txt"
"$venv/bin/python" - <<'PY'
import torch, dgl, torch_geometric, torch_sparse, torch_scatter
import torch_geometric.typing as t
print("torch", torch.__version__, "dgl", dgl.__version__, "pyg", torch_geometric.__version__,
      "torch_sparse", torch_sparse.__version__, "pyg_lib", t.WITH_PYG_LIB, file=__import__("sys").stderr)
PY
"$venv/bin/python" -m pip freeze > "$venv/pip-freeze.txt"
rm -f "$venv"/.bulkgnn-peers-*
touch "$marker"
echo "$venv"
