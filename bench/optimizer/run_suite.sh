#!/usr/bin/env bash
# Reproduces the optimizer figures of bench/README.md ("## Optimizer").
#   bench/optimizer/run_suite.sh [BUILD_DIR] [OUT_DIR] [SEEDS]
# Writes one JSON line per run to OUT_DIR/*.jsonl and Markdown tables to OUT_DIR/summary.md.
# Landscapes: bench/data/synthetic-*.csv (SYNTHETIC), bench/data/ornl-peak.csv (measured, ORNL),
# and any bench/data/measured-*.csv (measured on this machine).
# Environment: LANDSCAPES="a.csv b.csv" (instead of synthetic + measured), SKIP_ORNL=1,
# SKIP_TIMING=1 (no decision-time curve), BENCH_FLAGS="--separate-default" (added to every
# scoring run).
set -euo pipefail
here="$(cd "$(dirname "$0")/../.." && pwd)"
build="${1:-$here/build}"
out="${2:-/tmp/colltune-optimizer-bench}"
seeds="${3:-10}"
bin="$build/bench/optimizer/colltune-bench-optimizer"
bench() { nice -n 19 "$bin" "$@" ${BENCH_FLAGS:-}; }
sum="python3 $here/bench/optimizer/summarize.py"
mkdir -p "$out"
label() { python3 -c "
import json,sys
for l in sys.stdin:
    r=json.loads(l); r['label']=sys.argv[1]; print(json.dumps(r))" "$1"; }

run_landscape() {  # file, truth flag ("" or --holdout-truth), tag
  local file="$1" truth="$2" tag="$3" res="$out/$(basename "$1" .csv)${2:+-holdout}.jsonl"
  : > "$res"
  bench --landscape "$file" $truth --strategy exhaustive --seeds "$seeds" --finalists 0 | label "$tag exhaustive 1 pass" >> "$res"
  bench --landscape "$file" $truth --strategy bo --seeds "$seeds" --finalists 0 | label "$tag" >> "$res"
  bench --landscape "$file" $truth --strategy bo --seeds "$seeds" --finalists 1 --final-repeats 3 | label "$tag +engine final" >> "$res"
  bench --landscape "$file" $truth --strategy bo --seeds "$seeds" --finalists 0 --settings '{"tie_z":1}' | label "$tag default preference" >> "$res"
  bench --landscape "$file" $truth --strategy bo-per-size --seeds "$seeds" --finalists 0 | label "$tag" >> "$res"
  # random at bo's mean cost, per (collective, comm size)
  python3 - "$res" <<'PY' | while read -r coll p budget; do
import json,sys,collections
runs=collections.defaultdict(list)
for l in open(sys.argv[1]):
    r=json.loads(l)
    if r['strategy']=='bo' and r['label'] in ('all repeats', 'held-out'): runs[(r['collective'],r['comm_size'])].append(r['runs'])
for (c,p),v in runs.items(): print(c, p, round(sum(v)/len(v)))
PY
    bench --landscape "$file" $truth --collective "$coll" --comm-size "$p" --strategy random --budget "$budget" --seeds "$seeds" --finalists 0 | label "$tag at bo cost" >> "$res"
  done
  echo "### $(basename "$file") ${truth:+(held-out truth)}" >> "$out/summary.md"
  $sum "$res" >> "$out/summary.md"
  echo >> "$out/summary.md"
}

: > "$out/summary.md"
for f in ${LANDSCAPES:-"$here"/bench/data/synthetic-*.csv "$here"/bench/data/measured-*.csv}; do
  [ -e "$f" ] || continue
  run_landscape "$f" "" "all repeats"
  run_landscape "$f" "--holdout-truth" "held-out"
done
[ -n "${SKIP_ORNL:-}" ] || run_landscape "$here/bench/data/ornl-peak.csv" "" "all repeats"

[ -z "${SKIP_TIMING:-}" ] || { echo "wrote $out/summary.md"; exit 0; }
echo "### decision time, batch of 4 (ms)" >> "$out/summary.md"
bench --landscape "$here/bench/data/synthetic-reduce-p64-lownoise.csv" --timing-curve \
    --curve-counts 10,20,40,60,80,100,120 | tee "$out/timing.jsonl" | python3 -c "
import json,sys
print('| evaluated configs | sizes | with full hyper-parameter fit | steady (no refit) |')
print('|---|---|---|---|')
for l in sys.stdin:
    r=json.loads(l); print(f\"| {r['evaluated']} | {r['sizes']} | {r['decision_ms_with_full_fit']:.0f} | {r['decision_ms_steady']:.0f} |\")" >> "$out/summary.md"
echo "wrote $out/summary.md"
