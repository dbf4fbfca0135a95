#!/usr/bin/env bash
# bo against one exhaustive pass on the SYNTHETIC reduce family (bench/optimizer/reduce_family.py;
# bench/README.md "Reduce: bo against exhaustive").
#   bench/optimizer/run_reduce_family.sh [BUILD_DIR] [OUT_DIR] [LANDSCAPES] [SEEDS]
# Draws LANDSCAPES (20) landscapes per comm size (4 and 6 ranks) into OUT_DIR, runs exhaustive
# and bo (SEEDS = 5 each, --finalists 0) with the all-repeats and the held-out truth, and prints
# the comparison (summarize_family.py) and where the regret comes from (family_coverage.py).
# Environment: BO_SETTINGS='{"...":...}' (bo's settings), LABEL (the lines' label, default
# "bo"; to compare two builds, run each with its own BUILD_DIR and LABEL into one OUT_DIR),
# SKIP_EXHAUSTIVE=1, SKIP_GENERATE=1 (reuse OUT_DIR's landscapes), FAMILY_FLAGS (added to
# reduce_family.py, e.g. --shared-segment).
set -euo pipefail
here="$(cd "$(dirname "$0")/../.." && pwd)"
build="${1:-$here/build}"
out="${2:-/tmp/colltune-reduce-family}"
count="${3:-20}"
seeds="${4:-5}"
bin="$build/bench/optimizer/colltune-bench-optimizer"
label="${LABEL:-bo}"
mkdir -p "$out"
tag() { python3 -c "
import json,sys
for l in sys.stdin:
    r = json.loads(l)
    r['label'], r['landscape'], r['truth'] = sys.argv[1:4]
    print(json.dumps(r))" "$@"; }
for p in 4 6; do
  [ -n "${SKIP_GENERATE:-}" ] || python3 "$here/bench/optimizer/reduce_family.py" --comm-size "$p" \
    --count "$count" --output-dir "$out" ${FAMILY_FLAGS:-} > "$out/features-p$p.txt"
done
for f in "$out"/reduce-p*-s*.csv; do
  name="$(basename "$f" .csv)"
  for truth in all held-out; do
    flag=""; [ "$truth" = held-out ] && flag=--holdout-truth
    if [ -z "${SKIP_EXHAUSTIVE:-}" ]; then
      nice -n 19 "$bin" --landscape "$f" $flag --strategy exhaustive --seeds "$seeds" \
        --finalists 0 \
        | tag exhaustive "$name" "$truth" >> "$out/exhaustive.jsonl"
    fi
    nice -n 19 "$bin" --landscape "$f" $flag --strategy bo --seeds "$seeds" --finalists 0 \
      --settings "${BO_SETTINGS:-{\}}" | tag "$label" "$name" "$truth" >> "$out/$label.jsonl"
  done
done
python3 "$here/bench/optimizer/summarize_family.py" "$out"/*.jsonl
echo
python3 "$here/bench/optimizer/family_coverage.py" "$out"/*.jsonl
