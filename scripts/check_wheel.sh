#!/usr/bin/env bash
# The Python package as a user installs it: builds the wheel as `pip install .`
# does (pip's isolated build environment, scikit-build-core and pybind11 from
# PyPI), installs it into a fresh virtual environment beside numpy alone, and
# checks that it is self-contained: its extension needs no library of the
# system beyond the C and C++ runtimes and zlib (fmt is compiled in, oneTBB and
# METIS are bundled), and from outside the source tree it imports, reads cora
# and runs a NeighborLoader epoch.
#
#   scripts/check_wheel.sh [WORK_DIR]     (default: a temporary directory)
#
# Needs the Debian packages of `scripts/install_deps.sh --python` and PyPI.
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$PWD
data=${BULKGNN_SHARED_DATA:-$repo/../shared/data}
if [ $# -ge 1 ]; then
  work=$1
  # A venv or wheel of an earlier run would be tested instead of this one's.
  rm -rf "$work/venv" "$work/wheels" "$work/run" "$work/build"
  mkdir -p "$work"
else
  work=$(mktemp -d)
  trap 'rm -rf "$work"' EXIT
fi

/usr/bin/python3 -m venv "$work/venv"
pip="$work/venv/bin/pip"
if ! "$pip" install --quiet --upgrade pip; then
  echo "check_wheel: pip could not install from PyPI (the wheel's build needs scikit-build-core and pybind11 from there)" >&2
  exit 1
fi
started=$SECONDS
# Built in the work directory, not in the checkout's build-python/ cache.
CMAKE_BUILD_PARALLEL_LEVEL=${CMAKE_BUILD_PARALLEL_LEVEL:-2} "$pip" wheel . --no-deps \
  --config-settings=build-dir="$work/build" -w "$work/wheels"
echo "check_wheel: wheel built in $((SECONDS - started)) s: $(ls "$work/wheels")"
"$pip" install --quiet "$work"/wheels/bulkgnn-*.whl numpy

extensions=("$work"/venv/lib/python3*/site-packages/bulkgnn/_bulkgnn*.so)
if [ ! -f "${extensions[0]}" ]; then
  echo "check_wheel: the installed wheel has no bulkgnn/_bulkgnn*.so" >&2
  exit 1
fi
extension=${extensions[0]}
package_dir=$(dirname "$extension")
if ! libraries=$(ldd "$extension"); then
  echo "check_wheel: ldd cannot read $extension" >&2
  exit 1
fi
if grep -q "not found" <<<"$libraries"; then
  echo "check_wheel: the wheel's extension misses libraries:" >&2
  grep "not found" <<<"$libraries" >&2
  exit 1
fi
# Each library the extension loads must be bundled beside it or a base one.
unexpected=$(awk '/=>/ {print $1, $3}' <<<"$libraries" | while read -r name path; do
  case "$path" in
    "$package_dir"/*) ;;
    *)
      case "$name" in
        libc.so.* | libm.so.* | libstdc++.so.* | libgcc_s.so.* | libz.so.* | libpthread.so.* | \
          libdl.so.* | librt.so.* | ld-linux*) ;;
        *) echo "$name => $path" ;;
      esac
      ;;
  esac
done)
if [ -n "$unexpected" ]; then
  echo "check_wheel: the wheel's extension needs libraries of the system:" >&2
  echo "$unexpected" >&2
  exit 1
fi
licences=("$package_dir"/licenses/*)
if [ ! -f "${licences[0]}" ]; then
  echo "check_wheel: the wheel has no licence files in bulkgnn/licenses/" >&2
  exit 1
fi
for licence in "${licences[@]}"; do
  [ -s "$licence" ] || { echo "check_wheel: empty licence file $licence" >&2; exit 1; }
done

# From an empty directory, so that only the installed package can be imported.
mkdir -p "$work/run"
cd "$work/run"
"$work/venv/bin/python" - "$data/cora" <<'PY'
import sys

import numpy as np

import bulkgnn

assert "site-packages" in bulkgnn.__file__, bulkgnn.__file__
ds = bulkgnn.Dataset(sys.argv[1])
train = ds.split()[0]
seen = 0
for mb in bulkgnn.NeighborLoader(ds, train, fanouts=[10, 5], batch_size=64):
    seen += mb.batch_size
    assert np.asarray(mb.features).shape[0] == len(np.asarray(mb.input_nodes))
assert seen == len(train), (seen, len(train))
print(f"check_wheel: bulkgnn from the wheel loaded {ds.name} and ran an epoch of {seen} seeds")
PY
