#!/usr/bin/env bash
# Installs every Debian package bulkgnn builds, tests or benchmarks with.
# clang and libclang-rt-14-dev build the libFuzzer targets (preset fuzz); llvm
# brings llvm-symbolizer, which turns sanitizer reports into file:line stacks.
# With --python, only what `pip install .` needs to build the Python package
# (no MPI, CombBLAS, test or benchmark libraries, clang or Debian's torch).
# Idempotent: packages already present are left as they are.
set -euo pipefail

if [ "${1:-}" = "--python" ]; then
  packages=(
    build-essential cmake ninja-build python3-dev python3-venv
    libtbb-dev libfmt-dev libcli11-dev nlohmann-json3-dev zlib1g-dev
    librandom123-dev libmetis-dev libdlpack-dev
  )
elif [ $# -gt 0 ]; then
  echo "usage: scripts/install_deps.sh [--python]" >&2
  exit 2
else
  packages=(
    build-essential cmake ninja-build pkg-config python3
    libtbb-dev libfmt-dev libcli11-dev nlohmann-json3-dev zlib1g-dev
    librandom123-dev libgtest-dev libgmock-dev libbenchmark-dev libopenblas-dev
    libopenmpi-dev openmpi-bin libcombblas-dev libmetis-dev
    clang libclang-rt-14-dev llvm
    python3-dev pybind11-dev libdlpack-dev python3-numpy python3-torch
  )
fi

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done

if [ ${#missing[@]} -eq 0 ]; then
  echo "install_deps: all ${#packages[@]} packages present"
  exit 0
fi

sudo=""
[ "$(id -u)" -ne 0 ] && sudo="sudo"
echo "install_deps: installing ${missing[*]}"
$sudo apt-get update -qq
DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
