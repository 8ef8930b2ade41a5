#!/usr/bin/env bash
# Downloads, on this Debian 12 build machine, the Debian packages that a CUDA
# build of bulkgnn needs on the GPU machine, into .gpu-deps/ (git-ignored).
# The GPU machine's image (Ubuntu, with nvcc 13, CMake, ninja, gcc, Python and
# PyTorch) has none of Debian's -dev packages and no network; the device tool
# carries .gpu-deps/ with the call and scripts/gpu_check.sh unpacks it into a
# private prefix there. Idempotent: packages already downloaded in the
# candidate version are kept, other versions and dropped packages removed.
#
# Usage: scripts/prepare_gpu_deps.sh
set -euo pipefail
cd "$(dirname "$0")/.."

dest=.gpu-deps
# The whole working tree that travels with a device call must stay under
# 64 MiB; the sources take about 13 MiB.
max_mib=40

# Each package is here because the GPU build (preset cuda-release, MPI on,
# CombBLAS off; the Python extension only in gpu_check.sh's last step) cannot
# configure, link or run without it. Left out: CombBLAS (the 2D grid is not
# built without it), pybind11 (the image's pip one serves), libgmock-dev (no test uses gmock; GTest's config
# includes it only if present), googletest (sources; libgtest-dev ships the
# built libraries).
packages=(
  # core/, loader/, sampler/: find_package(TBB); TBB's config checks that the
  # files of all four of its targets exist, so each library package is needed.
  libtbb-dev libtbb12 libtbbmalloc2
  # Loaded by TBB at run time only to bind threads to NUMA nodes (with
  # libhwloc15, shipped for Open MPI below).
  libtbbbind-2-5
  # find_package(fmt), linked by most libraries and the CLI.
  libfmt-dev libfmt9
  # find_library(metis), REQUIRED by the top-level configure: vertex
  # partitions (bulkgnn partition, full-batch SAR) build without MPI.
  libmetis-dev libmetis5
  # find_package(CLI11), header-only: the bulkgnn CLI and benchmark programs.
  libcli11-dev
  # find_package(nlohmann_json), header-only: metrics, meta.json, dataset import.
  nlohmann-json3-dev
  # find_package(ZLIB): the OGB importer reads .csv.gz. zlib1g holds the file
  # that zlib1g-dev's libz.so link points to.
  zlib1g-dev zlib1g
  # Random123/philox.h, header-only: the sampler's counter-based streams.
  librandom123-dev
  # dlpack/dlpack.h, header-only: the Python extension's zero-copy arrays
  # (gpu_check.sh's python step).
  libdlpack-dev
  # find_package(GTest): every test program (static libraries + CMake config).
  libgtest-dev
  # find_package(benchmark): benchmarks/ (BULKGNN_BUILD_BENCHMARKS is on).
  libbenchmark-dev libbenchmark1debian
  # find_package(BLAS) with BLA_VENDOR=OpenBLAS is REQUIRED by the top-level
  # configure (benchmarks/trainer/gemm_efficiency links it): the -dev package
  # holds libopenblas.so and cblas.h, the pthread variant its runtime, which
  # needs gfortran's runtime and libquadmath (absent from the image).
  libopenblas-dev libopenblas-pthread-dev libopenblas0-pthread libgfortran5 libquadmath0
  # find_package(MPI) and mpirun: distributed/, the mpi tests and several
  # ranks sharing the GPU (benchmarks/gpu/shared_gpu_ranks.py). Open MPI runs
  # from the prefix (scripts/gpu_env.sh sets OPAL_PREFIX and PMIx's folders),
  # its ranks on one machine over shared memory: the network transports'
  # plugins stay unloadable (optional_needs below).
  openmpi-bin openmpi-common libopenmpi3 libopenmpi-dev libpmix2 libhwloc15 libudev1
  libevent-core-2.1-7 libevent-pthreads-2.1-7 libmunge2
)

# Sonames the GPU image provides (glibc, gcc's runtime, zlib): a library in
# the folder may need these without shipping them. Anything else a shipped
# library needs must be shipped too, except the known optional ones below.
image_sonames='^(libc\.so\.6|libm\.so\.6|libpthread\.so\.0|libdl\.so\.2|librt\.so\.1|ld-linux-x86-64\.so\.2|libstdc\+\+\.so\.6|libgcc_s\.so\.1|libz\.so\.1)$'
# "file needs soname" pairs that may stay unresolved, with the reason above.
# Open MPI's plugins for InfiniBand, libfabric, UCX, PSM, Flux and netlink,
# and its common libraries for them: Open MPI skips a plugin it cannot load
# (gpu_env.sh silences the notice and picks the shared-memory transports).
optional_needs='^(mca_[a-z]+_(ofi|ucx|psm|psm2|verbs|openib|flux|usnic|netlink)|libmca_common_(ofi|ucx|verbs))\.so[0-9.]* needs .*$'

mkdir -p "$dest"

echo "prepare_gpu_deps: apt-get update"
sudo=""
[ "$(id -u)" -ne 0 ] && sudo="sudo"
$sudo apt-get update -qq

# The file names apt would save for the candidate versions (URI, file, size, hash).
if ! uris=$(apt-get download --print-uris "${packages[@]}" 2>&1); then
  echo "prepare_gpu_deps: apt-get download --print-uris failed:" >&2
  echo "$uris" >&2
  exit 1
fi
# apt's file name for each package (in the order of packages), and the name
# it is kept under: letters, digits, '.', '_' and '-' only (apt writes an
# epoch's colon as '%3a'), safe for any copy between machines.
apt_names=()
wanted=()
for p in "${packages[@]}"; do
  name=$(awk -v p="$p" 'index($2, p "_") == 1 {print $2}' <<<"$uris")
  if [ -z "$name" ]; then
    echo "prepare_gpu_deps: apt-get download --print-uris named no file for $p" >&2
    exit 1
  fi
  apt_names+=("$name")
  wanted+=("${name//[^A-Za-z0-9._-]/_}")
done

present=0
for i in "${!packages[@]}"; do
  if [ -f "$dest/${wanted[$i]}" ]; then
    present=$((present + 1))
    continue
  fi
  echo "prepare_gpu_deps: downloading ${packages[$i]} (${apt_names[$i]})"
  # As root, apt warns that its sandbox user cannot write here; the check
  # below, not apt's status through the filter, decides success.
  (cd "$dest" && apt-get download -qq "${packages[$i]}" 2>&1 | grep -v '^W: Download is performed unsandboxed' || true)
  if [ ! -f "$dest/${apt_names[$i]}" ]; then
    echo "prepare_gpu_deps: apt-get download ${packages[$i]} did not write $dest/${apt_names[$i]}" >&2
    exit 1
  fi
  [ "${apt_names[$i]}" = "${wanted[$i]}" ] || mv "$dest/${apt_names[$i]}" "$dest/${wanted[$i]}"
done

echo "prepare_gpu_deps: $present of ${#packages[@]} packages were already in $dest"

for f in "$dest"/*.deb; do
  name=$(basename "$f")
  if ! printf '%s\n' "${wanted[@]}" | grep -qxF "$name"; then
    echo "prepare_gpu_deps: removing $f (not a wanted package or version)"
    rm -f "$f"
  fi
done
printf '%s\n' "${wanted[@]}" >"$dest/MANIFEST"

# Every library a shipped library links must be shipped or on the image.
check_dir=$(mktemp -d)
trap 'rm -rf "$check_dir"' EXIT
for name in "${wanted[@]}"; do
  dpkg -x "$dest/$name" "$check_dir"
done
# A set, not a list piped to grep -q: grep's early exit would fail printf
# with SIGPIPE under pipefail once the list outgrows the pipe's buffer.
declare -A shipped
while read -r name; do shipped[$name]=1; done < <(find "$check_dir" -name '*.so*' \( -type f -o -type l \) -printf '%f\n')
unresolved=()
while IFS= read -r -d '' lib; do
  readelf -h "$lib" 2>/dev/null | grep -q 'Type:.*DYN' || continue
  while read -r soname; do
    [ -n "${shipped[$soname]:-}" ] && continue
    grep -qE "$image_sonames" <<<"$soname" && continue
    grep -qE "$optional_needs" <<<"$(basename "$lib") needs $soname" && continue
    unresolved+=("$(basename "$lib") needs $soname")
  done < <(readelf -d "$lib" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p')
done < <(find "$check_dir" -type f -name '*.so*' -print0)
if [ ${#unresolved[@]} -gt 0 ]; then
  echo "prepare_gpu_deps: shipped libraries need libraries that are neither shipped nor on the GPU image:" >&2
  printf '  %s\n' "${unresolved[@]}" >&2
  exit 1
fi

size_kib=$(du -sk "$dest" | cut -f1)
echo "prepare_gpu_deps: $dest holds ${#wanted[@]} packages, $((size_kib / 1024)) MiB"
if [ "$size_kib" -gt $((max_mib * 1024)) ]; then
  echo "prepare_gpu_deps: $dest is over $max_mib MiB; the tree that travels must stay under 64 MiB" >&2
  exit 1
fi
