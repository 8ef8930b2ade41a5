#!/usr/bin/env bash
# Installs the Debian dependencies (if missing), configures and builds
# bulkgnn into build/ (or $BULKGNN_BUILD_DIR). Idempotent.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install_deps.sh
build_dir=${BULKGNN_BUILD_DIR:-build}
cmake -S . -B "$build_dir" -G Ninja -DCMAKE_BUILD_TYPE=Release ${BULKGNN_CMAKE_ARGS:-}
cmake --build "$build_dir" -j "$(nproc)"
