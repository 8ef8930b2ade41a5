#!/usr/bin/env bash
# The GPU check: everything a short lease of the GPU machine should do, in one
# call. On the GPU machine the device tool runs it as
#   scripts/gpu_check.sh $OUT        (carry: [".gpu-deps"])
# after scripts/prepare_gpu_deps.sh filled .gpu-deps/ on the build machine
# (and scripts/prepare_gpu_data.sh .gpu-data/, carried too: [".gpu-deps",
# ".gpu-data"], for the gpu tests that read real datasets).
#
# Steps, each timed, each logged; a failed step does not stop the steps that
# do not depend on it:
#   device      nvidia-smi's device line, tool versions
#   unpack      dpkg -x of .gpu-deps/*.deb into a private prefix in the build
#               folder (never into /), plus the links Debian's maintainer
#               scripts would have made
#   configure   the cuda-release preset (sm_90) with MPI from the prefix
#               (Open MPI, run from there by scripts/gpu_env.sh), CombBLAS
#               and the Python extension off, finding packages in the prefix
#               only: /usr and /usr/local are hidden from find_package and
#               find_library; the log lists what it still took from outside
#   build       all targets (--quick: the GPU tests, the CLI, GPU benchmarks)
#   libs        ldd of every built program: each library resolves
#   headers     the headers the build read from outside the source, build,
#               prefix, CUDA and compiler folders (on a Debian machine: the
#               owning packages; one of a -dev package the image lacks fails)
#   gpu-tests   ctest -L gpu, with BULKGNN_EXPECT_GPU=1
#   memcheck    compute-sanitizer memcheck over the gpu tests' programs
#   racecheck   compute-sanitizer racecheck over the same
#   gpu-bench   every GPU benchmark: an executable target with a source file
#               under benchmarks/gpu/, run from the repository root with no
#               arguments (so each must end in about a minute by default)
#   cpu-suite   ctest of every test not labelled gpu, BULKGNN_EXPECT_GPU=1 on
#               a GPU (skipped by --quick)
#   python      last, on its own: the build reconfigured with the Python
#               extension for the image's interpreter and pybind11, the
#               extension built, and python.gpu_loader run (the loader with
#               device="cuda" against the image's torch); a failure here
#               costs this step alone
# Without a GPU (none found, or --no-gpu) the steps from gpu-tests to
# gpu-bench only print what they would run: a rehearsal of the rest.
#
# Writes into OUT_DIR: summary.txt (device line, table of step, status and
# seconds, the tails of failed steps' logs) and logs.tar.gz (every step's
# log), both rewritten after each step, so that a run cut off at the device
# tool's 10-minute limit still returns what it did. Exit status: 0 if no step
# failed, 1 if one did (named on stderr), 2 for bad arguments.
set -euo pipefail

usage() {
  cat >&2 <<'EOF'
Usage: scripts/gpu_check.sh [--quick] [--no-gpu] [--no-mpi] [--budget SECONDS]
                            [--jobs N] [--build-dir DIR] OUT_DIR
  --quick          build only what the GPU steps run; no CPU suite
  --no-gpu         rehearse: skip the steps that need a GPU even if one is found
  --no-mpi         configure without MPI (no distributed/, no mpi tests): the
                   build of a machine without Open MPI
  --budget S       stop starting work S seconds after the start (default on a
                   GPU: 540, inside the device tool's 600 s; without: none)
  --jobs N         parallel compile and test jobs (default: nproc)
  --build-dir DIR  build folder (default: build-gpu-check)
EOF
  exit 2
}

quick=0
force_no_gpu=0
no_mpi=0
budget=""
jobs=$(nproc)
build_dir="build-gpu-check"
out_arg=""
while [ $# -gt 0 ]; do
  case "$1" in
    --quick) quick=1 ;;
    --no-gpu) force_no_gpu=1 ;;
    --no-mpi) no_mpi=1 ;;
    --budget) [ $# -ge 2 ] || usage; budget=$2; shift ;;
    --jobs) [ $# -ge 2 ] || usage; jobs=$2; shift ;;
    --build-dir) [ $# -ge 2 ] || usage; build_dir=$2; shift ;;
    -h|--help) usage ;;
    -*) echo "gpu_check: unknown option $1" >&2; usage ;;
    *) [ -z "$out_arg" ] || usage; out_arg=$1 ;;
  esac
  shift
done
[ -n "$out_arg" ] || usage

repo=$(cd "$(dirname "$0")/.." && pwd)
mkdir -p "$out_arg"
out=$(cd "$out_arg" && pwd)
cd "$repo"
# The real datasets the gpu tests read: ../shared/data where it exists, else
# the native copies that scripts/prepare_gpu_data.sh made in .gpu-data/ (the
# device tool carries them; the GPU machine has no ../shared).
if [ ! -d "$repo/../shared/data" ] && [ -d "$repo/.gpu-data" ]; then
  export BULKGNN_DATA="$repo/.gpu-data"
fi
mkdir -p "$build_dir"
build=$(cd "$build_dir" && pwd)
prefix=$build/deps-root
logs=$build/gpu-check-logs
rm -rf "$logs"
mkdir -p "$logs"
helper=$repo/scripts/gpu_check_helper.py

# CUDA's tools where the image leaves them off PATH.
if ! command -v nvcc >/dev/null && [ -x /usr/local/cuda/bin/nvcc ]; then
  export PATH=$PATH:/usr/local/cuda/bin
fi

have_gpu=0
if [ $force_no_gpu -eq 0 ] && command -v nvidia-smi >/dev/null && nvidia-smi -L 2>/dev/null | grep -q '^GPU '; then
  have_gpu=1
fi
if [ -z "$budget" ] && [ $have_gpu -eq 1 ]; then
  budget=540
fi
start_epoch=$(date +%s)

# Seconds left of the budget (a large number without one).
seconds_left() {
  if [ -z "$budget" ]; then
    echo 1000000
  else
    echo $((start_epoch + budget - $(date +%s)))
  fi
}

# Runs a command with what is left of the budget as its time limit.
bounded() {
  local left
  left=$(seconds_left)
  if [ "$left" -le 0 ]; then
    echo "gpu_check: out of time before: $*"
    return 124
  fi
  timeout --kill-after=10 "$left" "$@"
}

# Where the programs built against the prefix find its libraries at run time:
# their RUNPATH covers what they link, not what those libraries need in turn
# (libopenblas needs libgfortran); and where Open MPI, unpacked there, finds
# itself (scripts/gpu_env.sh). Only for the build's programs and the tools
# that run them: the image's other tools keep the image's libraries. The
# prefix's /lib (zlib1g) stays out: the image's libz serves.
with_prefix_libs() {
  (. "$repo/scripts/gpu_env.sh" "$build" && "$@")
}

step_names=()
step_status=()
step_seconds=()
step_notes=()
declare -A status_of

write_summary() {
  {
    echo "bulkgnn GPU check, $(date -u '+%Y-%m-%d %H:%M:%S UTC'), commit $(git -C "$repo" rev-parse --short HEAD 2>/dev/null || echo unknown)"
    echo "device: $(cat "$logs/device-line.txt" 2>/dev/null || echo unknown)"
    echo "mode: $([ $have_gpu -eq 1 ] && echo GPU || echo 'rehearsal (no GPU)')$([ $quick -eq 1 ] && echo ', quick'), jobs $jobs, budget ${budget:-none}"
    echo
    printf '%-10s %-6s %7s  %s\n' step status seconds note
    for i in "${!step_names[@]}"; do
      printf '%-10s %-6s %7s  %s\n' "${step_names[$i]}" "${step_status[$i]}" "${step_seconds[$i]}" "${step_notes[$i]}"
    done
    for extra in outside-prefix.txt gpu-benchmarks.txt; do
      if [ -s "$logs/$extra" ]; then
        echo
        cat "$logs/$extra"
      fi
    done
    for i in "${!step_names[@]}"; do
      if [ "${step_status[$i]}" = FAIL ]; then
        echo
        echo "---- last 40 lines of ${step_names[$i]}.log ----"
        tail -n 40 "$logs/${step_names[$i]}.log"
      fi
    done
  } >"$out/summary.txt"
  tar -czf "$out/logs.tar.gz" -C "$logs" .
}

# run_step NAME NEEDS FUNCTION: NEEDS is a space-separated list of steps that
# must have passed; the function's output goes to NAME.log, and it may write a
# one-line note to $logs/NAME.note. Status 3 from the function means "skipped
# by design" (no GPU, --quick); its note says why.
run_step() {
  local name=$1 needs=$2 fn=$3 dep status note started rc
  note=""
  started=$(date +%s)
  status=""
  for dep in $needs; do
    if [ "${status_of[$dep]:-}" != PASS ]; then
      status=SKIP
      note="needs $dep (${status_of[$dep]:-not run})"
      break
    fi
  done
  if [ -z "$status" ] && [ "$(seconds_left)" -le 0 ]; then
    status=FAIL
    note="out of time (budget $budget s)"
  fi
  if [ -z "$status" ]; then
    echo "gpu_check: $name ..."
    rm -f "$logs/$name.note"
    current_step=$name
    set +e
    (set -e; "$fn") >"$logs/$name.log" 2>&1
    rc=$?
    set -e
    note=$(cat "$logs/$name.note" 2>/dev/null || true)
    case $rc in
      0) status=PASS ;;
      3) status=SKIP ;;
      124) status=FAIL; note="timed out (budget $budget s)${note:+; $note}" ;;
      *) status=FAIL; note="exit $rc, see $name.log${note:+; $note}" ;;
    esac
  fi
  step_names+=("$name")
  step_status+=("$status")
  step_seconds+=("$(($(date +%s) - started))")
  step_notes+=("$note")
  status_of[$name]=$status
  echo "gpu_check: $name $status ${step_seconds[-1]} s${note:+ ($note)}"
  write_summary
}

# A step's one-line note for the summary table.
note() { echo "$*" >"$logs/$current_step.note"; }

step_device() {
  local line
  if [ $have_gpu -eq 1 ]; then
    line=$(nvidia-smi --query-gpu=index,name,driver_version,memory.total,compute_cap --format=csv,noheader | tr '\n' ';')
    nvidia-smi
  elif [ $force_no_gpu -eq 1 ]; then
    line="GPU steps skipped by --no-gpu"
  else
    line="no GPU found (nvidia-smi $(command -v nvidia-smi >/dev/null && echo 'lists none' || echo 'absent'))"
  fi
  echo "$line" >"$logs/device-line.txt"
  echo "device: $line"
  echo "host: $(uname -srm), $(nproc) cores, $(. /etc/os-release && echo "$PRETTY_NAME")"
  local tool
  for tool in nvcc cmake ninja g++ python3 compute-sanitizer ccache; do
    if command -v "$tool" >/dev/null; then
      echo "$tool: $(command -v "$tool"): $("$tool" --version 2>&1 | grep -m1 -iE 'release|version|[0-9]+\.[0-9]+')"
    else
      echo "$tool: not found"
    fi
  done
  note "$line"
}

step_unpack() {
  shopt -s nullglob
  local debs=("$repo"/.gpu-deps/*.deb) deb link target
  shopt -u nullglob
  if [ ${#debs[@]} -eq 0 ]; then
    echo "no .deb files in $repo/.gpu-deps: run scripts/prepare_gpu_deps.sh on the build machine and carry .gpu-deps"
    return 1
  fi
  rm -rf "$prefix"
  mkdir -p "$prefix"
  for deb in "${debs[@]}"; do
    echo "dpkg -x $(basename "$deb")"
    dpkg -x "$deb" "$prefix"
  done
  # Debian's maintainer scripts do not run under dpkg -x: make the OpenBLAS
  # links that update-alternatives makes on an installed system. FindBLAS
  # looks for libopenblas.so, BulkgnnDependencies for cblas.h, and cblas.h
  # includes openblas_config.h from the folder of the link.
  local arch=x86_64-linux-gnu header
  ln -sfn openblas-pthread/libopenblas.so "$prefix/usr/lib/$arch/libopenblas.so"
  ln -sfn openblas-pthread/libopenblas.so.0 "$prefix/usr/lib/$arch/libopenblas.so.0"
  for header in "$prefix/usr/include/$arch/openblas-pthread/"*.h; do
    ln -sfn "openblas-pthread/$(basename "$header")" "$prefix/usr/include/$arch/$(basename "$header")"
  done
  # update-alternatives' names for Open MPI's tools (mpirun, mpicxx, ...).
  local tool
  for tool in "$prefix"/usr/bin/*.openmpi; do
    [ -e "$tool" ] && ln -sfn "$(basename "$tool")" "${tool%.openmpi}"
  done
  # Absolute links (zlib1g-dev's libz.so -> /lib/...) would leave the prefix.
  while IFS= read -r -d '' link; do
    target=$(readlink "$link")
    ln -sfn "$(realpath -m --relative-to="$(dirname "$link")" "$prefix$target")" "$link"
    echo "relinked $link -> $(readlink "$link")"
  done < <(find "$prefix" -type l -lname '/*' -print0)
  # Libraries and headers only: documentation links point at packages left out.
  local broken
  broken=$(find "$prefix/usr/lib" "$prefix/usr/include" "$prefix/lib" -xtype l -print)
  if [ -n "$broken" ]; then
    echo "library or header links that point nowhere in $prefix:"
    echo "$broken"
    return 1
  fi
  note "${#debs[@]} packages, $(du -sm "$prefix" | cut -f1) MiB unpacked"
}

# NCCL on the GPU image: PyTorch's wheel ships libnccl.so.2 (no unversioned
# name, which find_library wants) under site-packages/nvidia; its nccl.h sits
# beside it or in the toolkit. Links both into $build/nccl-root for NCCL_ROOT,
# so that the NCCL tests build and run there instead of skipping.
image_nccl() {
  local lib header dir
  lib=$( (python3 -c 'import nvidia, sys; print("\n".join(nvidia.__path__))' 2>/dev/null || true;
    cuda_root; echo /usr/lib/x86_64-linux-gnu) |
    while read -r dir; do [ -d "$dir" ] && find "$dir" -name 'libnccl.so.2*' \( -type f -o -type l \) 2>/dev/null; done | head -n 1)
  if [ -z "$lib" ]; then
    echo "no libnccl.so.2 in PyTorch's nvidia packages, $(cuda_root) or /usr/lib: the NCCL tests cannot run"
    return 1
  fi
  for header in "$(dirname "$(dirname "$lib")")/include/nccl.h" "$(cuda_root)/include/nccl.h" \
    "$(cuda_root)/targets/x86_64-linux/include/nccl.h"; do
    [ -f "$header" ] && break
  done
  if [ ! -f "$header" ]; then
    echo "found $lib but no nccl.h beside it or in $(cuda_root)"
    return 1
  fi
  rm -rf "$build/nccl-root"
  mkdir -p "$build/nccl-root/include" "$build/nccl-root/lib"
  ln -s "$header" "$build/nccl-root/include/nccl.h"
  ln -s "$(readlink -f "$lib")" "$build/nccl-root/lib/libnccl.so"
  ln -s "$(readlink -f "$lib")" "$build/nccl-root/lib/libnccl.so.2"
  echo "NCCL: $lib with $header"
}

step_configure() {
  # The file API reply names every target's sources: gpu_check_helper.py finds
  # the GPU benchmarks in it.
  mkdir -p "$build/.cmake/api/v1/query"
  touch "$build/.cmake/api/v1/query/codemodel-v2"
  local launcher=() cxx nvcc python rt
  cxx=$(command -v g++)
  nvcc=$(command -v nvcc) || { echo "nvcc is not on PATH"; return 1; }
  python=$(command -v python3)
  # Where a build cache exists (the build machine), CUDA objects use it too;
  # BulkgnnOptions.cmake already sets it for C++.
  if command -v ccache >/dev/null; then
    launcher=(-DCMAKE_CUDA_COMPILER_LAUNCHER="$(command -v ccache)")
  fi
  # glibc's librt.a, which FindCUDAToolkit wants for CUDA::cudart_static, is
  # under the hidden /usr: name it through the compiler that links with it.
  rt=$("$cxx" -print-file-name=librt.a)
  [ -f "$rt" ] || rt=""
  local mpi=(-DBULKGNN_ENABLE_MPI=OFF)
  if [ $no_mpi -eq 0 ]; then
    if [ ! -x "$prefix/usr/bin/mpicxx" ]; then
      echo "no Open MPI in $prefix: run scripts/prepare_gpu_deps.sh again (or pass --no-mpi)"
      return 1
    fi
    mpi=(-DBULKGNN_ENABLE_MPI=ON -DMPI_CXX_COMPILER="$prefix/usr/bin/mpicxx"
      -DMPIEXEC_EXECUTABLE="$prefix/usr/bin/mpirun")
  fi
  local nccl=()
  if [ $have_gpu -eq 1 ]; then
    image_nccl || return 1
    nccl=(-DBULKGNN_ENABLE_NCCL=ON -DNCCL_ROOT="$build/nccl-root")
  fi
  # The preset cuda-release (Release, CUDA on, sm_90), in this build folder,
  # with what the GPU machine lacks switched off. Under with_prefix_libs:
  # FindMPI runs the prefix's mpicxx.
  with_prefix_libs bounded cmake --preset cuda-release -S "$repo" -B "$build" --no-warn-unused-cli \
    -DCMAKE_CUDA_ARCHITECTURES=90 \
    "${mpi[@]}" "${nccl[@]}" \
    -DBULKGNN_ENABLE_COMBBLAS=OFF \
    -DBULKGNN_PYTHON=OFF \
    -DCMAKE_POSITION_INDEPENDENT_CODE=ON \
    -DCMAKE_PREFIX_PATH="$prefix/usr;$prefix" \
    -DCMAKE_SYSTEM_IGNORE_PREFIX_PATH="/usr;/usr/local;/" \
    -DCMAKE_MAKE_PROGRAM="$(command -v ninja)" \
    -DCMAKE_CXX_COMPILER="$cxx" \
    -DCMAKE_CUDA_COMPILER="$nvcc" \
    -DCMAKE_CUDA_HOST_COMPILER="$cxx" \
    -DPython3_EXECUTABLE="$python" \
    ${rt:+-DCUDAToolkit_rt_LIBRARY="$rt"} \
    "${launcher[@]}"
  # Every cached path outside the prefix, the sources and the build: what the
  # configure still took from the machine (compilers, binutils, CUDA).
  {
    echo "configure took from outside the prefix (CMakeCache.txt):"
    grep -E '^[A-Za-z0-9_]+:(FILEPATH|PATH|STRING|UNINITIALIZED)=/' "$build/CMakeCache.txt" |
      grep -vE "=($prefix|$repo|$build)(/|$)" |
      grep -vE '^(CMAKE_INSTALL_PREFIX|CMAKE_SYSTEM_IGNORE_PREFIX_PATH|CMAKE_(ADDR2LINE|AR|LINKER|NM|OBJCOPY|OBJDUMP|RANLIB|READELF|STRIP|CXX_COMPILER_AR|CXX_COMPILER_RANLIB|MAKE_PROGRAM)):' |
      sed 's/^/  /'
  } | tee "$logs/outside-prefix.txt"
  grep -q 'CUDA=ON' "$logs/configure.log" || { echo "configure did not enable CUDA"; return 1; }
  [ $no_mpi -eq 1 ] || grep -q 'MPI=ON' "$logs/configure.log" || { echo "configure did not enable MPI"; return 1; }
  note "$(($(wc -l <"$logs/outside-prefix.txt") - 1)) cached paths outside the prefix (listed below)"
}

gpu_benchmarks() {
  python3 "$helper" gpu-benchmarks "$build" "$repo"
}

step_build() {
  local targets=()
  if [ $quick -eq 1 ]; then
    targets=(bulkgnn)
    # Not grep -q: its early exit would fail ninja with SIGPIPE under pipefail.
    if ninja -C "$build" -t targets all | grep '^bulkgnn_gpu_tests:' >/dev/null; then
      targets+=(bulkgnn_gpu_tests)
    fi
    mapfile -t -O ${#targets[@]} targets < <(gpu_benchmarks | cut -f1)
  fi
  # gtest_discover_tests runs every test program as it is built, so the
  # build needs the prefix's libraries at run time as the tests do. ccache's
  # direct mode would replay a compile whose headers came from /usr even
  # where the prefix now holds them (it checks the files it saw, not the
  # search path): the preprocessor mode keeps the headers step truthful.
  export CCACHE_NODIRECT=1
  if [ ${#targets[@]} -gt 0 ]; then
    with_prefix_libs bounded cmake --build "$build" -j "$jobs" --target "${targets[@]}"
    note "targets ${targets[*]}"
  else
    with_prefix_libs bounded cmake --build "$build" -j "$jobs"
    note "all targets"
  fi
}

# Every ELF file (programs and shared libraries) the build made.
built_programs() {
  local f
  find "$build" -path "$prefix" -prune -o -path "$build/CMakeFiles" -prune -o \
    -type f -perm -u+x -print | while read -r f; do
    if [ "$(head -c 4 "$f" | tr -d '\000')" = $'\177ELF' ]; then echo "$f"; fi
  done
}

# Reads paths on stdin and prints those under none of the folders given.
outside_of() {
  local path dir inside
  while read -r path; do
    inside=0
    for dir in "$@"; do
      case $path in "$dir"/*) inside=1; break ;; esac
    done
    [ $inside -eq 1 ] || echo "$path"
  done
}

cuda_root() {
  dirname "$(dirname "$(readlink -f "$(command -v nvcc)")")"
}

step_libs() {
  local f missing=0 count=0
  while read -r f; do
    count=$((count + 1))
    if with_prefix_libs ldd "$f" | grep -q 'not found'; then
      echo "$f:"
      with_prefix_libs ldd "$f" | grep 'not found'
      missing=$((missing + 1))
    fi
  done < <(built_programs)
  echo "libraries the built programs load from outside the prefix and CUDA:"
  built_programs | with_prefix_libs xargs -r ldd | awk '$2 == "=>" && $3 ~ /^\// {print $3}' |
    xargs -r realpath | sort -u | outside_of "$prefix" "$(cuda_root)" "$build" | sed 's/^/  /'
  note "$count ELF files, $missing with unresolved libraries"
  [ $missing -eq 0 ]
}

step_headers() {
  local compiler_dirs outside
  # The compiler's own header folders (libstdc++, its builtins): not packages.
  mapfile -t compiler_dirs < <(g++ -E -x c++ -v /dev/null 2>&1 |
    sed -n '/#include <...> search starts here:/,/End of search list./s/^ //p' |
    xargs -r realpath -m | grep -vxE '/usr(/local)?/include(/x86_64-linux-gnu)?')
  outside=$(cd "$build" && ninja -t deps | sed -n 's/^    //p' | sort -u | xargs -r realpath -m | sort -u |
    outside_of "$repo" "$build" "$prefix" "$(cuda_root)" "${compiler_dirs[@]}")
  echo "headers read from outside the sources, the build, the prefix, CUDA and the compiler:"
  echo "${outside:-(none)}"
  if [ -z "$outside" ]; then
    note "none outside"
    return 0
  fi
  if ! command -v dpkg-query >/dev/null; then
    note "$(wc -l <<<"$outside") outside (listed in the log)"
    return 0
  fi
  # On a Debian machine, name their packages: C library and kernel headers
  # are on any image with a compiler, and so are the runtime files it links
  # (libc6's crt files, libstdc++6, libgcc-s1; the image's zlib1g serves, see
  # with_prefix_libs); a -dev package's would be missing there.
  local owners unexpected
  # dpkg -S fails for a header no package owns; those stay listed above.
  owners=$( (xargs -r dpkg -S <<<"$outside" 2>/dev/null || true) | cut -d: -f1 | tr ',' '\n' | sed 's/^ *//' | sort -u | paste -sd' ')
  unexpected=$(tr ' ' '\n' <<<"$owners" | grep -vE '^(libc6|libc6-dev|linux-libc-dev|libstdc\+\+6|libstdc\+\+-[0-9]+-dev|libgcc-s1|libgcc-[0-9]+-dev|libc-dev-bin|zlib1g)$' || true)
  echo "owning packages: $owners"
  if [ -n "$unexpected" ]; then
    echo "headers of packages the GPU image lacks: $unexpected (ship the package in scripts/prepare_gpu_deps.sh, or make in step_unpack the link that dpkg -x left out)"
    note "headers from $(paste -sd' ' <<<"$unexpected")"
    return 1
  fi
  note "$(wc -l <<<"$outside") outside, only from: $owners"
}

# ctest's -L takes a regular expression: anchored, so that only the label
# gpu itself counts.
ctest_gpu_json() {
  ctest --test-dir "$build" -L '^gpu$' --show-only=json-v1 >"$logs/gpu-tests.json"
  local count
  count=$(python3 -c 'import json,sys; print(len(json.load(open(sys.argv[1])).get("tests", [])))' "$logs/gpu-tests.json")
  echo "$count"
}

step_gpu_tests() {
  local count
  count=$(ctest_gpu_json)
  if [ "$count" -eq 0 ]; then
    echo "no test carries the label gpu"
    note "no tests labelled gpu"
    return 1
  fi
  if [ $have_gpu -eq 0 ]; then
    ctest --test-dir "$build" -L '^gpu$' -N
    note "$count tests labelled gpu, not run: no GPU"
    return 3
  fi
  # Several test programs share the one GPU at a time: the lease is short.
  BULKGNN_EXPECT_GPU=1 with_prefix_libs bounded ctest --test-dir "$build" -L '^gpu$' -j "$jobs" --output-on-failure --no-tests=error |
    tee "$logs/gpu-tests-output.txt"
  # ctest counts a skipped test as no failure; on the GPU machine a skipped
  # gpu test is one that did not run where it must (say, NCCL not found).
  local skipped
  skipped=$(grep -cE '\(Skipped\)$' "$logs/gpu-tests-output.txt" || true)
  if [ "$skipped" -gt 0 ]; then
    echo "gpu_check: $skipped gpu tests were skipped on the GPU machine:"
    grep -E '\(Skipped\)$' "$logs/gpu-tests-output.txt"
    note "$count tests, $skipped skipped"
    return 1
  fi
  note "$count tests"
}

sanitizer_step() {
  local tool=$1 count
  count=$(ctest_gpu_json)
  if [ "$count" -eq 0 ]; then
    echo "no test carries the label gpu: nothing to run under $tool"
    note "no tests labelled gpu (the gpu-tests step fails on that)"
    return 3
  fi
  if [ $have_gpu -eq 0 ]; then
    python3 "$helper" sanitize compute-sanitizer "$tool" "$logs/gpu-tests.json" 0 --dry-run
    note "would run the $count gpu tests' programs above; no GPU"
    return 3
  fi
  local sanitizer share candidate
  sanitizer=$(command -v compute-sanitizer || true)
  for candidate in "$(cuda_root)/bin/compute-sanitizer" "$(cuda_root)/compute-sanitizer/compute-sanitizer"; do
    [ -n "$sanitizer" ] || [ ! -x "$candidate" ] || sanitizer=$candidate
  done
  if [ -z "$sanitizer" ]; then
    echo "compute-sanitizer is neither on PATH nor in $(cuda_root)"
    return 1
  fi
  # At most 40% of what is left, so that one slow tool leaves time for the
  # benchmarks and the other tool.
  share=$(($(seconds_left) * 2 / 5))
  BULKGNN_EXPECT_GPU=1 with_prefix_libs python3 "$helper" sanitize "$sanitizer" "$tool" "$logs/gpu-tests.json" "$share"
  note "$count tests' programs, $share s allowed"
}
step_memcheck() { sanitizer_step memcheck; }
step_racecheck() { sanitizer_step racecheck; }

# Seconds one GPU benchmark may run: 120, or less where the budget is short.
bench_limit() {
  local left
  left=$(seconds_left)
  echo $((left < 120 ? (left > 1 ? left : 1) : 120))
}

step_gpu_bench() {
  local benches name path failed=()
  benches=$(gpu_benchmarks)
  if [ -z "$benches" ]; then
    echo "no GPU benchmarks (no executable target has a source under benchmarks/gpu/)" | tee "$logs/gpu-benchmarks.txt"
    note "no GPU benchmarks"
    return 0
  fi
  echo "GPU benchmarks: $(echo "$benches" | cut -f1 | paste -sd' ')" | tee "$logs/gpu-benchmarks.txt"
  if [ $have_gpu -eq 0 ]; then
    note "$(echo "$benches" | wc -l) found, not run: no GPU"
    return 3
  fi
  while IFS=$'\t' read -r name path; do
    echo "==== $name ($path)"
    # A benchmark that hangs must not take the CPU suite's time as well.
    if ! (cd "$repo" && with_prefix_libs timeout --kill-after=10 "$(bench_limit)" "$path"); then
      failed+=("$name")
    fi
  done <<<"$benches"
  note "$(echo "$benches" | wc -l) run${failed[*]:+, failed: ${failed[*]}}"
  [ ${#failed[@]} -eq 0 ]
}

# Tests that read the real datasets of ../shared/data, which does not travel
# to the GPU machine; left out of the CPU suite where the folder is missing.
# Keep in step with the tests that use BULKGNN_SHARED_DATA.
data_tests='^(cli\.|CliOnCora\.|real_dataset_test\.|ogb_open_test\.|FullDisk\.|StaleStaging\.|BySignal/Interrupted\.|Cli\.(OutputPathsAreCheckedBeforeAnyWork|InfoTakesQuiet))'

step_cpu_suite() {
  if [ $quick -eq 1 ]; then
    note "--quick"
    return 3
  fi
  # The suite takes about 2 minutes on 2 cores; a start with less than a
  # minute left would only time out.
  if [ "$(seconds_left)" -lt 60 ]; then
    note "not run: $(seconds_left) s of the budget left"
    return 3
  fi
  local exclude=() data
  data=$(sed -n 's/^BULKGNN_SHARED_DATA:PATH=//p' "$build/CMakeCache.txt")
  if [ ! -d "$data" ]; then
    exclude=(-E "$data_tests")
    echo "$data is missing: leaving out the tests that read it ($data_tests)"
  fi
  # On the GPU machine every test may count on the GPU (kernels_test's
  # CudaDevices.GpuMachineSeesItsGpu is labelled unit).
  if [ $have_gpu -eq 1 ]; then
    export BULKGNN_EXPECT_GPU=1
  fi
  with_prefix_libs bounded ctest --test-dir "$build" -LE '^gpu$' -j "$jobs" --output-on-failure "${exclude[@]}"
  note "$(grep -m1 -E 'tests passed' "$logs/cpu-suite.log" || true)${exclude[*]:+; tests of ../shared/data left out}"
}

# The Python extension, configured only now: the configure step leaves it
# off, so that an extension the image's pybind11 or Python cannot build
# fails this step and no other. The reconfigure keeps every other setting
# (the cache; the libraries are position-independent already, as the
# extension needs them), so only the extension's own files compile.
step_python() {
  local python pybind11_dir headers
  python=$(command -v python3)
  if [ $have_gpu -eq 0 ]; then
    echo "would configure with -DBULKGNN_PYTHON=ON -DPython_EXECUTABLE=$python and its" \
      "pybind11, build _bulkgnn and run python.gpu_loader"
    note "not run: no GPU"
    return 3
  fi
  if [ "$(seconds_left)" -lt 120 ]; then
    note "not run: $(seconds_left) s of the budget left"
    return 3
  fi
  if ! pybind11_dir=$("$python" -c 'import pybind11; print(pybind11.get_cmake_dir())' 2>&1); then
    echo "$python has no pybind11: $pybind11_dir"
    note "no pybind11 for $python"
    return 1
  fi
  headers=$("$python" -c 'import sysconfig; print(sysconfig.get_paths()["include"])')
  if [ ! -f "$headers/Python.h" ]; then
    echo "$python has no Python.h in $headers: the extension cannot build here"
    note "no Python.h for $python"
    return 1
  fi
  with_prefix_libs bounded cmake -S "$repo" -B "$build" --no-warn-unused-cli -DBULKGNN_PYTHON=ON \
    -DPython_EXECUTABLE="$python" -Dpybind11_DIR="$pybind11_dir"
  with_prefix_libs bounded cmake --build "$build" -j "$jobs" --target _bulkgnn
  # BULKGNN_DATA (.gpu-data, exported above) holds cora.
  BULKGNN_EXPECT_GPU=1 with_prefix_libs bounded ctest --test-dir "$build" -R '^python\.gpu_loader$' \
    --output-on-failure --no-tests=error
  note "python.gpu_loader with torch $("$python" -c 'import torch; print(torch.__version__)' 2>&1)"
}

run_step device "" step_device
run_step unpack "" step_unpack
run_step configure "unpack" step_configure
run_step build "configure" step_build
run_step libs "build" step_libs
run_step headers "build" step_headers
run_step gpu-tests "build" step_gpu_tests
run_step memcheck "build" step_memcheck
run_step racecheck "build" step_racecheck
run_step gpu-bench "build" step_gpu_bench
run_step cpu-suite "build" step_cpu_suite
run_step python "build" step_python

echo
cat "$out/summary.txt"
failed=()
for i in "${!step_names[@]}"; do
  [ "${step_status[$i]}" = FAIL ] && failed+=("${step_names[$i]}")
done
if [ ${#failed[@]} -gt 0 ]; then
  echo "gpu_check: FAILED steps: ${failed[*]} (logs in $out/logs.tar.gz)" >&2
  exit 1
fi
echo "gpu_check: no step failed (summary in $out/summary.txt)"
