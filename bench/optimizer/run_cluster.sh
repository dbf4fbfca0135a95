#!/bin/sh
# Whole-cluster benchmark (bench/README.md "Whole-cluster"): every collective on one sim
# profile, per-size bo vs nearest-size extension vs bo-cluster.
# usage: bench/optimizer/run_cluster.sh BUILD_DIR OUT_DIR SEEDS PROFILE PPN SIZES [COLLECTIVES]
#   e.g. bench/optimizer/run_cluster.sh build /tmp/cluster 3 pise 48 2,4,8,16,32,64,128,256,576
# The landscapes are simulated on SIM_THREADS threads (default 2; results do not depend on it)
# and kept in OUT_DIR/cache for the next run.
set -eu
build=$1 out=$2 seeds=$3 profile=$4 ppn=$5 sizes=$6
collectives=${7:-bcast reduce allreduce gather}
mkdir -p "$out/cache"
for c in $collectives; do
  "$build/bench/optimizer/colltune-bench-cluster" --sim "$profile" --collective "$c" \
    --comm-sizes "$sizes" --ppn "$ppn" --seeds "$seeds" --cache-dir "$out/cache" \
    --sim-threads "${SIM_THREADS:-2}" \
    >"$out/$profile-$c.md" 2>"$out/$profile-$c.jsonl"
done
cat "$out/$profile"-*.md >"$out/$profile-summary.md"
