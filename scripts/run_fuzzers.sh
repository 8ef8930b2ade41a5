#!/usr/bin/env bash
# Builds the libFuzzer targets (preset fuzz, build-fuzz/) and runs each for
# SECONDS (default 60) from its seed corpus in fuzz/corpus/, one per core at a
# time. Inputs that crash, hang, leak or allocate too much are saved as
# build-fuzz/findings/TARGET-*;
# turn each into a regression test (tests/*/fuzz_findings_test.cpp). Exits
# non-zero if any target found something. New corpus entries stay in a scratch
# directory, so the repository's seeds change only by hand.
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-60}
targets=(ogb_import npy manifest checkpoint)

cmake --preset fuzz >/dev/null
cmake --build --preset fuzz -j 2

# Every file the fuzzers create lives under one scratch TMPDIR (in memory
# where possible: the importer fsyncs), removed even if a fuzzer dies.
scratch=$(mktemp -d "$( [ -w /dev/shm ] && echo /dev/shm || echo "${TMPDIR:-/tmp}")/bulkgnn-fuzz.XXXXXX")
trap 'rm -rf "$scratch"' EXIT
findings=build-fuzz/findings
mkdir -p "$findings"

# One fuzzer; its log and, on a finding, a "failed" mark go to the scratch
# directory, which the summary below reads.
fuzz_one() {
  local target=$1
  mkdir -p "$scratch/corpus-$target" "$scratch/tmp-$target"
  # -malloc_limit_mb: one allocation above it is a finding (e.g. a length
  # field taken on trust); -rss_limit_mb bounds the whole process.
  if ! TMPDIR="$scratch/tmp-$target" "build-fuzz/fuzz/${target}_fuzzer" \
      -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -malloc_limit_mb=512 \
      -max_len=4096 -print_final_stats=1 -artifact_prefix="$findings/$target-" \
      "$scratch/corpus-$target" "fuzz/corpus/$target" 2>"$scratch/$target.log"; then
    touch "$scratch/$target.failed"
  fi
}

# One fuzzer per core at a time (each is single-threaded).
jobs_at_once=$(nproc)
running=0
for target in "${targets[@]}"; do
  echo "== fuzzing $target for ${seconds}s"
  fuzz_one "$target" &
  running=$((running + 1))
  if [ "$running" -ge "$jobs_at_once" ]; then
    wait -n || true
    running=$((running - 1))
  fi
done
wait

failed=()
for target in "${targets[@]}"; do
  echo "== $target"
  if [ -e "$scratch/$target.failed" ]; then
    failed+=("$target")
    tail -n 60 "$scratch/$target.log" >&2
  fi
  grep -E '^(stat::number_of_executed_units|stat::peak_rss_mb|#[0-9]+.*DONE)' \
    "$scratch/$target.log" || true
done

if [ ${#failed[@]} -ne 0 ]; then
  echo "run_fuzzers: findings in ${failed[*]}; replay one with" >&2
  echo "  build-fuzz/fuzz/TARGET_fuzzer $findings/TARGET-crash-..." >&2
  echo "(an empty input means the failure came between inputs, e.g. LeakSanitizer's" >&2
  echo "check at exit: its report above names the cause)" >&2
  ls -l "$findings" >&2
  exit 1
fi
echo "run_fuzzers: no findings in ${targets[*]} (${seconds}s each)"
