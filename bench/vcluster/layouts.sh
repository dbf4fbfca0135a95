#!/usr/bin/env bash
# Intra- vs inter-node latency and the best coll_tuned algorithm per layout on the virtual
# cluster (sudo slurm/dev-cluster start --nodes 4; docs/virtual-cluster.md). For each layout
# (nodes x ranks per node), collective, algorithm and message size: the median of REPEATS OSU
# runs, each launched with srun --mpi=pmix in partition vcluster, runs shuffled over repeats.
#
#   bench/vcluster/layouts.sh [BUILD_DIR] > figures.tsv
#
# Environment: REPEATS (3), ITERATIONS (20), SIZES ("4 1024 65536"),
# LAYOUTS ("1 4,4 1,2 2,1 2,2 1": nodes and ranks per node; 1x2 and 2x1 run allreduce only).
set -euo pipefail
build="${1:-build}"
osu="$(cd "$build/osu-bench" && pwd)"
repeats="${REPEATS:-3}"
iterations="${ITERATIONS:-20}"
read -r -a sizes <<<"${SIZES:-4 1024 65536}"
IFS=, read -r -a layouts <<<"${LAYOUTS:-1 4,4 1,2 2,1 2,2 1}"
declare -A algorithms=([bcast]="0 1 2 5 6" [allreduce]="0 1 3 4 6")
max=0
for s in "${sizes[@]}"; do [ "$s" -gt "$max" ] && max=$s; done
min=${sizes[0]}

tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
# One line per (layout, collective, algorithm, repeat), shuffled so that drift spreads evenly.
for r in $(seq "$repeats"); do
  for layout in "${layouts[@]}"; do
    for coll in bcast allreduce; do
      case "$layout" in "1 2" | "2 1") [ "$coll" = allreduce ] || continue ;; esac
      for alg in ${algorithms[$coll]}; do echo "$layout $coll $alg $r"; done
    done
  done
done | shuf >"$tmp/plan"

while read -r nodes ppn coll alg r; do
  out="$tmp/$nodes.$ppn.$coll.$alg.$r"
  env OMPI_MCA_mpi_yield_when_idle=1 OMPI_MCA_coll_tuned_use_dynamic_rules=1 \
    "OMPI_MCA_coll_tuned_${coll}_algorithm=$alg" \
    srun -p vcluster --mpi=pmix -N "$nodes" --ntasks-per-node="$ppn" --quiet \
    "$osu/osu_$coll" -m "$min:$max" -i "$iterations" -x 2 </dev/null >"$out" 2>"$out.err" || {
    echo "failed: $nodes x $ppn $coll alg $alg (see below)" >&2
    cat "$out.err" >&2
  }
done <"$tmp/plan"

printf 'layout\tcollective\talgorithm\tsize\tmedian_us\n'
for layout in "${layouts[@]}"; do
  read -r nodes ppn <<<"$layout"
  for coll in bcast allreduce; do
    for alg in ${algorithms[$coll]}; do
      for s in "${sizes[@]}"; do
        vals="$(cat "$tmp/$nodes.$ppn.$coll.$alg".* 2>/dev/null | awk -v s="$s" '$1==s {print $2}' | sort -g || true)"
        [ -n "$vals" ] || continue
        median="$(printf '%s\n' "$vals" | awk '{v[NR]=$1} END {print (NR%2) ? v[(NR+1)/2] : (v[NR/2]+v[NR/2+1])/2}')"
        printf '%sx%s\t%s\t%s\t%s\t%s\n' "$nodes" "$ppn" "$coll" "$alg" "$s" "$median"
      done
    done
  done
done
