#!/usr/bin/env bash
# Reproduces bench/README.md "Optimizer at scale (sim)": bo, bo-per-size, random (at bo's mean
# number of runs) and exhaustive on ground-truth landscapes of the simulated clusters.
#   bench/optimizer/run_sim_scale.sh [BUILD_DIR] [OUT_DIR] [SEEDS] [PROFILE:COMM_SIZE ...]
# Default profiles: pise:576 hpc64x128:1024. Writes OUT_DIR/<profile>-<P>.jsonl and
# OUT_DIR/summary.md; noise-free latencies are cached in OUT_DIR/<profile>-<P>.cache.csv (the
# first pass simulates every configuration x 19 sizes; later passes only redraw the noise).
set -euo pipefail
here="$(cd "$(dirname "$0")/../.." && pwd)"
build="${1:-$here/build}"
out="${2:-/tmp/colltune-sim-scale}"
seeds="${3:-10}"
shift $(( $# < 3 ? $# : 3 ))
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=(pise:576 hpc64x128:1024)
bin="$build/bench/optimizer/colltune-bench-optimizer"
mkdir -p "$out"
: > "$out/summary.md"
for target in "${targets[@]}"; do
  profile="${target%%:*}" p="${target##*:}"
  res="$out/$profile-$p.jsonl" cache="$out/$profile-$p.cache.csv"
  sim=(--sim "$profile" --comm-size "$p" --sim-cache "$cache" --sim-threads 2 --sim-verbose --finalists 0)
  : > "$res"
  for strategy in exhaustive bo bo-per-size; do
    "$bin" "${sim[@]}" --strategy "$strategy" --seeds "$seeds" >> "$res"
  done
  # random at bo's mean number of runs, per collective
  python3 - "$res" <<'PY' | while read -r coll budget; do
import json, sys, collections
runs = collections.defaultdict(list)
for line in open(sys.argv[1]):
    r = json.loads(line)
    if r["strategy"] == "bo":
        runs[r["collective"]].append(r["runs"])
for c, v in runs.items():
    print(c, round(sum(v) / len(v)))
PY
    "$bin" "${sim[@]}" --collective "$coll" --strategy random --budget "$budget" --seeds "$seeds" >> "$res"
  done
  echo "### $profile, $p ranks" >> "$out/summary.md"
  python3 "$here/bench/optimizer/summarize.py" --label "$profile" "$res" >> "$out/summary.md"
  echo >> "$out/summary.md"
done
echo "wrote $out/summary.md"
