#!/usr/bin/env bash
# A rules file against Open MPI's default at one layout on the virtual cluster (sudo
# slurm/dev-cluster start --nodes 4; docs/virtual-cluster.md), in pairs: ROUNDS rounds, each one
# OSU run with the file loaded and one without, in A B / B A order (the order alternates so that
# drift hits both sides alike). Every run: srun --mpi=pmix in partition vcluster, ranks yield when
# idle (the nodes share the machine's cores), coll_tuned's dynamic rules on; "default" = no file
# (Open MPI's fixed decision), "tuned" = coll_tuned_dynamic_rules_filename=RULES.
#
#   bench/vcluster/paired.sh BUILD_DIR RULES COLLECTIVE NODES RANKS [MIN:MAX] > paired.tsv
#
# Output per message size: the pairs, the geometric mean of tuned/default, its 95 % interval
# (Student t on the log ratios) and the median ratio. Below 1 = the file is faster.
# Environment: ROUNDS (6), ITERATIONS (20), WARMUP (2).
set -euo pipefail
if [ $# -lt 5 ]; then
  echo "usage: $0 BUILD_DIR RULES COLLECTIVE NODES RANKS [MIN:MAX]" >&2
  exit 2
fi
osu="$(cd "$1/osu-bench" && pwd)"
rules="$(cd "$(dirname "$2")" && pwd)/$(basename "$2")"
coll="$3"
nodes="$4"
ranks="$5"
range="${6:-4:1048576}"
rounds="${ROUNDS:-6}"
iterations="${ITERATIONS:-20}"
warmup="${WARMUP:-2}"
[ -r "$rules" ] || { echo "$0: cannot read $rules" >&2; exit 2; }
[ -x "$osu/osu_$coll" ] || { echo "$0: no osu_$coll under $osu" >&2; exit 2; }

tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT

# One run; a run that fails (a rank crashing on the namespaces' TCP now and then) is retried up
# to twice and reported on stderr.
run() {  # run KIND ROUND
  local kind="$1" round="$2" out="$tmp/$1.$2" attempt
  local -a mca=(OMPI_MCA_mpi_yield_when_idle=1 OMPI_MCA_coll=^hcoll
    OMPI_MCA_coll_tuned_use_dynamic_rules=1)
  [ "$kind" = tuned ] && mca+=("OMPI_MCA_coll_tuned_dynamic_rules_filename=$rules")
  for attempt in 1 2 3; do
    if env "${mca[@]}" srun -p vcluster --mpi=pmix -N "$nodes" -n "$ranks" --quiet \
      "$osu/osu_$coll" -m "$range" -i "$iterations" -x "$warmup" </dev/null >"$out.raw" \
      2>"$out.err"; then
      awk '$1 ~ /^[0-9]+$/ {print $1, $2}' "$out.raw" >"$out"
      [ -s "$out" ] && return 0
    fi
    echo "$0: $kind run $round, attempt $attempt failed:" >&2
    tail -n 3 "$out.err" >&2
  done
  echo "$0: $kind run $round failed 3 times" >&2
  exit 1
}

for r in $(seq "$rounds"); do
  if [ $((r % 2)) = 1 ]; then run tuned "$r"; run default "$r"; else run default "$r"; run tuned "$r"; fi
done

# Per size: log ratios tuned/default of the rounds; mean, t interval (two-sided 95 %), median.
for r in $(seq "$rounds"); do
  join "$tmp/tuned.$r" "$tmp/default.$r" | awk -v r="$r" '{print $1, r, $2, $3}'
done | sort -k1,1n -k2,2n | awk '
  BEGIN {
    split("12.706 4.303 3.182 2.776 2.571 2.447 2.365 2.306 2.262 2.228 2.201 2.179 2.160 2.145 2.131", t, " ")
    print "size\tpairs\ttuned_us_median\tdefault_us_median\tratio_gmean\tratio_low95\tratio_high95\tratio_median"
  }
  function median(a, n,   i, j, x) {
    for (i = 2; i <= n; i++) { x = a[i]; for (j = i - 1; j >= 1 && a[j] > x; j--) a[j + 1] = a[j]; a[j + 1] = x }
    return (n % 2) ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
  }
  function flush(   i, mean, sd, half, q) {
    if (n == 0) return
    mean = 0; for (i = 1; i <= n; i++) mean += l[i]; mean /= n
    sd = 0; for (i = 1; i <= n; i++) sd += (l[i] - mean) ^ 2; sd = (n > 1) ? sqrt(sd / (n - 1)) : 0
    q = (n - 1 <= 15) ? t[n - 1] : 1.96
    half = (n > 1) ? q * sd / sqrt(n) : 0
    printf "%s\t%d\t%.2f\t%.2f\t%.3f\t%.3f\t%.3f\t%.3f\n", size, n, median(tu, n), median(de, n),
      exp(mean), exp(mean - half), exp(mean + half), exp(median(l, n))
    n = 0
  }
  $1 != size { flush(); size = $1 }
  $3 > 0 && $4 > 0 { n++; tu[n] = $3; de[n] = $4; l[n] = log($3 / $4) }
  END { flush() }'
