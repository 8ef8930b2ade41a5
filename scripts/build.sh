#!/usr/bin/env bash
# Installs the Debian dependencies (if missing), configures and builds
# bulkgnn into build/ (or $BULKGNN_BUILD_DIR). Idempotent.
#   scripts/build.sh            every target: libraries, CLI, tests, benchmarks
#   scripts/build.sh bulkgnn    only the named targets (the CLI and what it links)
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install_deps.sh
build_dir=${BULKGNN_BUILD_DIR:-build}
cmake -S . -B "$build_dir" -G Ninja -DCMAKE_BUILD_TYPE=Release ${BULKGNN_CMAKE_ARGS:-}
targets=()
for target in "$@"; do targets+=(--target "$target"); done
cmake --build "$build_dir" -j "$(nproc)" "${targets[@]}"
