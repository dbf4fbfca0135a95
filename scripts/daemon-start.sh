# Sourced by scripts/test-install and scripts/check-docker-layout (bash): start a colltune
# daemon in the background and learn its URL from its start line.
#
#   start_colltune_daemon OUT ERR COMMAND...
# runs COMMAND with stdout to OUT and stderr to ERR, sets daemon_pid and daemon_url (from
# "colltune: listening on URL"); returns 1, with ERR shown, when the daemon exits first or
# prints no URL within 10 s (the caller's cleanup stops it by daemon_pid).
start_colltune_daemon() {
  local out="$1" err="$2"
  shift 2
  : >"$out"
  "$@" >"$out" 2>"$err" &
  daemon_pid=$!
  daemon_url=""
  for _ in $(seq 1 100); do
    daemon_url="$(sed -n 's/^colltune: listening on \(https\{0,1\}:[^ ]*\).*/\1/p' "$out")"
    [ -n "$daemon_url" ] && return 0
    if ! kill -0 "$daemon_pid" 2>/dev/null; then
      cat "$err" >&2
      return 1
    fi
    sleep 0.1
  done
  cat "$err" >&2
  return 1
}
