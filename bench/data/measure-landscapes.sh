#!/bin/bash
# How bench/data/measured-p4.csv and measured-p6.csv were made (2026-11-22, 04:47-04:57 UTC, this
# 2-core VM idle but for this script: load average 1.7-3.1; Open MPI 4.1.4; the bundled
# colltune-osu-bench). Exhaustive campaigns over the full 4.1.4 knob space; no run timed out.
# Usage: bench/data/measure-landscapes.sh BUILD_DIR OUT_DIR
set -euo pipefail
C="$(cd "$1" && pwd)/cli/colltune"
out="$2"
mkdir -p "$out" && cd "$out"
"$C" tune --backend local --np 4 --collectives bcast,reduce,allreduce,gather --sizes 4:1M \
  --strategy exhaustive --repeats 3 --iterations 100 --warmup 10 --batch-size 40 --run-timeout 8 \
  --final-repeats 1 --no-verify --db p4.db --rules-out p4.conf --report-out p4.json
"$C" tune --backend local --np 6 --collectives bcast,reduce --sizes 4:1M \
  --strategy exhaustive --repeats 3 --iterations 100 --warmup 10 --batch-size 40 --run-timeout 8 \
  --final-repeats 1 --no-verify --db p6.db --rules-out p6.conf --report-out p6.json
"$C" export landscape --db p4.db --out measured-p4.csv
"$C" export landscape --db p6.db --out measured-p6.csv
