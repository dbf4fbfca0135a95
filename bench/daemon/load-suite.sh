#!/usr/bin/env bash
# Load suite of `colltune serve` (docs/reliability/load.md). Loopback only, bounded in time.
#
#   bench/daemon/load-suite.sh [load|soak|exhaust|all]        (default: all)
#
# load: a finished campaign (id 1) is prepared at pace 0, then the daemon restarts on the same
#       store with the sim backend paced (runs take their simulated wall time) and RUNNING
#       campaigns kept running; for LOAD_SECONDS: SSE_CLIENTS streams on /api/v1/events,
#       RSS/fds/threads sampled every SAMPLE_SECONDS, and wrk (CONNECTIONS connections,
#       WRK_SECONDS each) cycling over the read endpoints until the time is up.
# soak: a fresh store, the sim backend unpaced; SOAK_COUNT small campaigns back to back
#       (SOAK_LANES at a time), RSS/fds/threads sampled every SAMPLE_SECONDS.
#
# Settings (environment): BUILD (default build-load), OUT (results folder), LOAD_SECONDS=600,
# WRK_SECONDS=20, CONNECTIONS=64, WRK_THREADS=2, SSE_CLIENTS=100, RUNNING=6, PACE=1.0,
# SOAK_COUNT=1000, SOAK_LANES=1, SAMPLE_SECONDS=5 (SOAK_SAMPLE_SECONDS=1 in the soak).
# Exit status 0 only when every check passed: no wrk socket error or non-2xx answer, every SSE
# stream connected to the end with every event, every soak campaign done, the daemon stopped
# cleanly.
set -euo pipefail

HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
BUILD=${BUILD:-$ROOT/build-load}
BIN=${COLLTUNE_BIN:-$BUILD/cli/colltune}  # COLLTUNE_BIN: another build (before/after runs)
OUT=${OUT:-/tmp/colltune-load-$(date +%Y%m%d-%H%M%S)}
LOAD_SECONDS=${LOAD_SECONDS:-600}
WRK_SECONDS=${WRK_SECONDS:-20}
CONNECTIONS=${CONNECTIONS:-64}
WRK_THREADS=${WRK_THREADS:-2}
SSE_CLIENTS=${SSE_CLIENTS:-100}
RUNNING=${RUNNING:-6}
PACE=${PACE:-1.0}
SOAK_COUNT=${SOAK_COUNT:-1000}
SOAK_LANES=${SOAK_LANES:-1}
SAMPLE_SECONDS=${SAMPLE_SECONDS:-5}
SOAK_SAMPLE_SECONDS=${SOAK_SAMPLE_SECONDS:-1}
PHASE=${1:-all}
CLIENTS="python3 $HERE/load_clients.py"

ADMIN=load-admin-token-0123456789abcdef
VIEWER=load-viewer-token-0123456789abcdef
TOKENS='[{"token": "'$ADMIN'", "role": "admin", "name": "admin"}, {"token": "'$VIEWER'", "role": "viewer", "name": "viewer"}]'

[[ -x $BIN ]] || { echo "no $BIN: build it (cmake -DCMAKE_BUILD_TYPE=Release; ninja colltune)" >&2; exit 2; }
command -v wrk >/dev/null || { echo "wrk is missing (apt-get install wrk)" >&2; exit 2; }
mkdir -p "$OUT"
echo "results in $OUT"
FAILED=0
fail() { echo "FAIL: $*" | tee -a "$OUT/summary.txt"; FAILED=1; }

DAEMON_PID=
SAMPLER_PID=
cleanup() {
  [[ -n $SAMPLER_PID ]] && kill "$SAMPLER_PID" 2>/dev/null || true
  [[ -n $DAEMON_PID ]] && kill "$DAEMON_PID" 2>/dev/null || true
  wait 2>/dev/null || true
}
trap cleanup EXIT

# start_daemon CONFIG LOG: starts `colltune serve`, sets DAEMON_PID and URL.
start_daemon() {
  "$BIN" serve --config "$1" >"$2" 2>&1 &
  DAEMON_PID=$!
  for _ in $(seq 1 300); do
    URL=$(grep -o 'listening on http://[^ ]*' "$2" | head -1 | cut -d' ' -f3) || true
    [[ -n $URL ]] && return 0
    kill -0 "$DAEMON_PID" 2>/dev/null || { cat "$2" >&2; exit 1; }
    sleep 0.1
  done
  echo "the daemon did not start" >&2
  exit 1
}

stop_daemon() {
  kill -TERM "$DAEMON_PID"
  local rc=0
  wait "$DAEMON_PID" || rc=$?
  [[ $rc -eq 0 ]] || fail "the daemon exited with status $rc on SIGTERM"
  DAEMON_PID=
}

# sampler PID FILE: elapsed seconds, VmRSS kB, VmHWM kB, open fds, threads.
start_sampler() {
  local pid=$1 file=$2
  (
    echo "# elapsed_s rss_kb hwm_kb fds threads" >"$file"
    t0=$(date +%s.%N)
    while kill -0 "$pid" 2>/dev/null; do
      rss=$(awk '/^VmRSS/ {print $2}' /proc/"$pid"/status 2>/dev/null) || break
      hwm=$(awk '/^VmHWM/ {print $2}' /proc/"$pid"/status 2>/dev/null) || break
      thr=$(awk '/^Threads/ {print $2}' /proc/"$pid"/status 2>/dev/null) || break
      fds=$(ls /proc/"$pid"/fd 2>/dev/null | wc -l)
      now=$(date +%s.%N)
      echo "$(awk -v a="$now" -v b="$t0" 'BEGIN {printf "%.1f", a - b}') $rss $hwm $fds $thr" >>"$file"
      sleep "$SAMPLE_SECONDS"
    done
  ) &
  SAMPLER_PID=$!
}
stop_sampler() { kill "$SAMPLER_PID" 2>/dev/null || true; wait "$SAMPLER_PID" 2>/dev/null || true; SAMPLER_PID=; }

# wait_done ID: polls the campaign until it is done (600 s at most).
wait_done() {
  for _ in $(seq 1 6000); do
    state=$(curl -s -H "Authorization: Bearer $VIEWER" "$URL/api/v1/campaigns/$1" |
            python3 -c 'import json,sys; c=json.load(sys.stdin); print(c["state"] + ("+" if c["active"] else ""))')
    case $state in done|failed|cancelled) echo "$state"; return 0 ;; esac
    sleep 0.1
  done
  echo timeout
}

# One wrk run: ENDPOINT LABEL ROUND; appends a line to wrk.tsv.
run_wrk() {
  local path=$1 label=$2 round=$3 log="$OUT/wrk/$2.$3.txt"
  wrk -t"$WRK_THREADS" -c"$CONNECTIONS" -d"${WRK_SECONDS}s" --timeout 10s --latency \
      -H "Authorization: Bearer $VIEWER" "$URL$path" >"$log" 2>&1 || true
  local rps p50 p99 non2xx sockerr bytes
  rps=$(awk '/^Requests\/sec/ {print $2}' "$log")
  p50=$(awk '$1 == "50%" {print $2}' "$log")
  p99=$(awk '$1 == "99%" {print $2}' "$log")
  non2xx=$(awk '/Non-2xx or 3xx responses/ {print $5}' "$log")
  sockerr=$(awk -F'[ ,]+' '/Socket errors/ {print $4+$6+$8+$10}' "$log")
  bytes=$(awk '/^Transfer\/sec/ {print $2}' "$log")
  printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$round" "$label" "$path" "${rps:-0}" "${p50:--}" \
         "${p99:--}" "${non2xx:-0}" "${sockerr:-0}" "$(cut -d' ' -f1-3 /proc/loadavg)" >>"$OUT/wrk.tsv"
  [[ -n $rps ]] || fail "wrk $label round $round printed no figure (see $log)"
  [[ ${non2xx:-0} -eq 0 ]] || fail "wrk $label round $round: $non2xx non-2xx answers"
  [[ ${sockerr:-0} -eq 0 ]] || fail "wrk $label round $round: $sockerr socket errors"
}

# The campaign of the README figure (bo, four collectives at 16 ranks, 4 B..1 MiB, budget 24).
cat >"$OUT/seed-spec.json" <<'EOF'
{"name": "load seed", "backend": "sim", "strategy": "bo", "budget": 24, "seed": 1,
 "sizes": "4:1048576",
 "contexts": [{"collective": "bcast", "comm_size": 16}, {"collective": "allreduce", "comm_size": 16},
              {"collective": "reduce", "comm_size": 16}, {"collective": "gather", "comm_size": 16}]}
EOF
# The campaigns kept running under load: bo, two contexts, paced.
cat >"$OUT/running-spec.json" <<'EOF'
{"name": "load running", "backend": "sim", "strategy": "bo", "budget": 24,
 "sizes": "4:1048576",
 "contexts": [{"collective": "bcast", "comm_size": 16}, {"collective": "allreduce", "comm_size": 16}]}
EOF
# The soak campaign: one context, four sizes, a small budget.
cat >"$OUT/soak-spec.json" <<'EOF'
{"name": "soak", "backend": "sim", "strategy": "random", "budget": 4, "batch_size": 4,
 "final_candidates": 1, "final_repeats": 1, "sizes": "4:64",
 "contexts": [{"collective": "bcast", "comm_size": 8}]}
EOF

config() {  # config PACE MAX_CONCURRENT DATABASE
  cat <<EOF
{"listen": "127.0.0.1:0", "database": "$3", "rules_dir": "$OUT/rules",
 "backends": {"sim": {"max_concurrent_jobs": $2, "pace": $1}},
 "tokens": $TOKENS, "http_threads": 256, "max_event_streams": 128,
 "max_event_streams_per_client": 128, "max_connections_per_client": 1024}
EOF
}

load_phase() {
  echo "== load: prepare the finished campaign (pace 0)"
  config 0 4 "$OUT/load.db" >"$OUT/prepare.json"
  start_daemon "$OUT/prepare.json" "$OUT/prepare.log"
  curl -sf -H "Authorization: Bearer $ADMIN" -H 'Content-Type: application/json' \
       --data @"$OUT/seed-spec.json" "$URL/api/v1/campaigns" >/dev/null
  state=$(wait_done 1)
  [[ $state == done ]] || fail "the seed campaign ended $state"
  stop_daemon

  echo "== load: $LOAD_SECONDS s, $RUNNING campaigns running (pace $PACE), $SSE_CLIENTS SSE clients, wrk -c$CONNECTIONS"
  config "$PACE" "$RUNNING" "$OUT/load.db" >"$OUT/load.json"
  start_daemon "$OUT/load.json" "$OUT/load.log"
  start_sampler "$DAEMON_PID" "$OUT/load-samples.txt"
  local from_id
  from_id=$(sqlite3 "$OUT/load.db" 'select coalesce(max(id), 0) from events' 2>/dev/null || echo 0)
  $CLIENTS feed --url "$URL" --token "$ADMIN" --spec "$OUT/running-spec.json" --running "$RUNNING" \
           --duration "$LOAD_SECONDS" >"$OUT/feed.json" &
  local feed_pid=$!
  sleep 3  # the first campaigns start before the streams open
  $CLIENTS sse --url "$URL" --token "$VIEWER" --clients "$SSE_CLIENTS" --duration "$((LOAD_SECONDS - 5))" \
           --from-id "$from_id" >"$OUT/sse.json" &
  local sse_pid=$!
  sleep 2
  mkdir -p "$OUT/wrk"
  printf 'round\tlabel\tpath\trequests_s\tp50\tp99\tnon2xx\tsocket_errors\tloadavg\n' >"$OUT/wrk.tsv"
  local endpoints=("/api/v1/campaigns campaigns" "/api/v1/campaigns/1 campaign"
                   "/api/v1/campaigns/1/measurements?limit=100 measurements"
                   "/api/v1/campaigns/1/report report" "/metrics metrics" "/api/v1/health health")
  local start round=0
  start=$(date +%s)
  while (( $(date +%s) - start + WRK_SECONDS * ${#endpoints[@]} <= LOAD_SECONDS - 10 )); do
    round=$((round + 1))
    for e in "${endpoints[@]}"; do run_wrk "${e% *}" "${e#* }" "$round"; done
  done
  wait "$feed_pid" || fail "the feeder failed"
  wait "$sse_pid" || fail "SSE: not every stream stayed connected with every event (see sse.json)"
  curl -s -H "Authorization: Bearer $VIEWER" "$URL/metrics" >"$OUT/metrics-after-load.txt"
  stop_sampler
  stop_daemon
  $CLIENTS summary "$OUT/load-samples.txt" >"$OUT/load-memory.json"
  {
    echo "## load ($(date -u +%FT%TZ))"
    echo "wrk rounds (figures per endpoint and round):"; column -t -s$'\t' "$OUT/wrk.tsv"
    echo "SSE:"; cat "$OUT/sse.json"
    echo "feeder:"; cat "$OUT/feed.json"
    echo "daemon memory / fds / threads over the phase:"; cat "$OUT/load-memory.json"
  } | tee -a "$OUT/summary.txt"
}

soak_phase() {
  echo "== soak: $SOAK_COUNT campaigns back to back ($SOAK_LANES at a time), pace 0"
  config 0 "$SOAK_LANES" "$OUT/soak.db" >"$OUT/soak.json"
  start_daemon "$OUT/soak.json" "$OUT/soak.log"
  SAMPLE_SECONDS=$SOAK_SAMPLE_SECONDS start_sampler "$DAEMON_PID" "$OUT/soak-samples.txt"
  $CLIENTS soak --url "$URL" --token "$ADMIN" --spec "$OUT/soak-spec.json" --count "$SOAK_COUNT" \
           --lanes "$SOAK_LANES" --out "$OUT/soak-campaigns.tsv" >"$OUT/soak-result.json" ||
    fail "soak: not every campaign finished done (see soak-campaigns.tsv)"
  sleep "$SAMPLE_SECONDS"  # one sample after the last campaign
  stop_sampler
  stop_daemon
  $CLIENTS summary "$OUT/soak-samples.txt" >"$OUT/soak-memory.json"
  {
    echo "## soak ($(date -u +%FT%TZ))"
    cat "$OUT/soak-result.json"
    echo "daemon memory / fds / threads over the soak:"; cat "$OUT/soak-memory.json"
  } | tee -a "$OUT/summary.txt"
}

{ echo "# colltune load suite: $(date -u +%FT%TZ), $(nproc) cores"; uptime; } | tee "$OUT/summary.txt"
# exhaust: connection exhaustion (issue 20 item 1). The daemon (http_threads 96, the default)
#       with one finished campaign; EXHAUST_COUNT slow attackers (one header line every 4 s,
#       never ending the head), then as many idle ones, each for EXHAUST_SECONDS, from
#       EXHAUST_SOURCES loopback addresses; health and campaign-list latency on fresh connections
#       meanwhile (bench/daemon/exhaustion.py). Results: exhaust-slow.json, exhaust-idle.json.
#       A probe without a 200 within 60 s fails the phase.
exhaust_phase() {
  local count=${EXHAUST_COUNT:-500} seconds=${EXHAUST_SECONDS:-60} sources=${EXHAUST_SOURCES:-10}
  echo "== exhaust: $count slow, then $count idle connections, $seconds s each"
  printf '{"listen": "127.0.0.1:0", "database": "%s", "rules_dir": "%s",\n "backends": {"sim": {"pace": 0}}, "tokens": %s}\n' \
         "$OUT/exhaust.db" "$OUT/rules" "$TOKENS" >"$OUT/exhaust.json"
  start_daemon "$OUT/exhaust.json" "$OUT/exhaust.log"
  curl -sf -H "Authorization: Bearer $ADMIN" -H 'Content-Type: application/json' \
       --data @"$OUT/soak-spec.json" "$URL/api/v1/campaigns" >/dev/null
  [[ $(wait_done 1) == done ]] || fail "the exhaust seed campaign did not finish"
  for mode in slow idle; do
    python3 "$HERE/exhaustion.py" --url "$URL" --token "$VIEWER" --mode "$mode" --count "$count" \
            --sources "$sources" --duration "$seconds" >"$OUT/exhaust-$mode.json" ||
      fail "exhaustion.py $mode failed"
    python3 "$HERE/exhaustion.py" --summarize "$OUT/exhaust-$mode.json" | tee -a "$OUT/summary.txt" ||
      fail "exhaust $mode: probes without an answer"
  done
  stop_daemon
}

case $PHASE in
  load) load_phase ;;
  soak) soak_phase ;;
  exhaust) exhaust_phase ;;
  all) load_phase; soak_phase; exhaust_phase ;;
  *) echo "usage: $0 [load|soak|exhaust|all]" >&2; exit 2 ;;
esac
uptime | tee -a "$OUT/summary.txt"
[[ $FAILED -eq 0 ]] && echo "load suite: all checks passed" | tee -a "$OUT/summary.txt"
exit $FAILED
