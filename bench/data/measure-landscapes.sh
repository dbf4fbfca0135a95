#!/bin/bash
# How bench/data/measured-p4.csv and measured-p6.csv were made (2026-11-22, 06:41-07:0x UTC, this
# 2-core VM idle but for this script; Open MPI 4.1.4; the bundled colltune-osu-bench; 5 repeats).
# Exhaustive campaigns over the full 4.1.4 knob space.
# Usage: bench/data/measure-landscapes.sh BUILD_DIR OUT_DIR   (REPEATS=N, default 5)
set -euo pipefail
repeats="${REPEATS:-5}"
C="$(cd "$1" && pwd)/cli/colltune"
out="$2"
mkdir -p "$out" && cd "$out"
"$C" tune --backend local --np 4 --collectives bcast,reduce,allreduce,gather --sizes 4:1M \
  --strategy exhaustive --repeats "$repeats" --iterations 100 --warmup 10 --batch-size 40 --run-timeout 8 \
  --final-repeats 1 --no-verify --db p4.db --rules-out p4.conf --report-out p4.json
"$C" tune --backend local --np 6 --collectives bcast,reduce --sizes 4:1M \
  --strategy exhaustive --repeats "$repeats" --iterations 100 --warmup 10 --batch-size 40 --run-timeout 8 \
  --final-repeats 1 --no-verify --db p6.db --rules-out p6.conf --report-out p6.json
# The bench files keep the search runs only: the final job re-measures a handful of finalists
# in one short stretch of time, and this VM's interference comes in bursts (bench/README.md).
for p in p4 p6; do
  "$C" export landscape --db "$p.db" --out "measured-$p-all.csv"
  awk -F, 'NR == 1 { for (i = 1; i <= NF; ++i) if ($i == "purpose") col = i; print; next }
           $col == "search"' "measured-$p-all.csv" > "measured-$p.csv"
done
