#!/usr/bin/env bash
# Cost per sampled edge as the graph grows: generates R-MAT graphs of edge
# factor 16 at each scale (cached in $BULKGNN_BENCH_CACHE), samples
# $MINIBATCHES GraphSAGE minibatches (15,10,5, batch 1024, bulk 32) from each
# on 2 threads, and prints generation time, peak memory, load and shuffle
# time, and the sampler's ns per sampled edge. Usage: benchmarks/scale/run_scale.sh [SCALE...]
set -euo pipefail
cd "$(dirname "$0")/../.."
bulkgnn=build/tools/bulkgnn
cache=${BULKGNN_BENCH_CACHE:-/tmp/bulkgnn-bench-cache}
minibatches=${MINIBATCHES:-256}
scales=("$@")
[ ${#scales[@]} -eq 0 ] && scales=(16 18 20 22 24 26)
mkdir -p "$cache"

printf "%-6s %14s %8s %12s %14s %8s %9s %13s %12s\n" scale edges gen_s gen_rss_GiB sample_rss_GiB load_s shuffle_s sampler_edges ns_per_edge
for s in "${scales[@]}"; do
  dir="$cache/rmat-s$s-e16"
  gen_s=cached gen_rss=-
  if [ ! -f "$dir/manifest.json" ]; then
    /usr/bin/time -f "%e %M" -o "$cache/gen-$s.time" "$bulkgnn" generate rmat --quiet --scale "$s" --edge-factor 16 "$dir" >/dev/null
    read -r gen_s gen_kb < "$cache/gen-$s.time"
    gen_rss=$(awk -v k="$gen_kb" 'BEGIN{printf "%.2f", k/1048576}')
  fi
  /usr/bin/time -f "%e %M" -o "$cache/sample-$s.time" "$bulkgnn" sample "$dir" --quiet --threads 2 \
    --fanouts 15,10,5 --batch-size 1024 --bulk 32 --max-minibatches "$minibatches" \
    --metrics-out "$cache/sample-$s.json" >/dev/null
  read -r _ sample_kb < "$cache/sample-$s.time"
  python3 - "$cache/sample-$s.json" "$dir/manifest.json" "$s" "$gen_s" "$gen_rss" "$sample_kb" <<'PY'
import json, sys
m = json.load(open(sys.argv[1])); g = json.load(open(sys.argv[2]))
st = m["stages"]
# Cost per edge of the sampler's own stages; the epoch shuffle is O(seeds)
# per epoch and reported apart, as it is amortised over a whole epoch.
sampler = st["sampler/draw_rows"] + st["sampler/relabel"]
print(f"{sys.argv[3]:<6} {g['num_edges']:>14} {sys.argv[4]:>8} {sys.argv[5]:>12} "
      f"{int(sys.argv[6])/1048576:>14.2f} {st['load']:>8.3f} {st['shuffle']:>9.3f} "
      f"{m['sampled_edges']:>13} {1e9 * sampler / m['sampled_edges']:>12.2f}")
PY
done
