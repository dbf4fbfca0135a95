#!/usr/bin/env bash
# Role of a demo-cluster container: slurmctld | slurmd | colltune (see docker-compose.yml).
# Every container writes the same slurm.conf (the settings of slurm/dev-cluster, for several
# nodes) and uses the munge key on the shared volume, created by the first container to start.
#
# The daemon's admin token: COLLTUNE_TOKENS when given, else one made by `colltune token new` at
# the first start and kept on the state volume (/var/lib/colltune/admin.token, mode 0600):
#   docker compose -f docker/docker-compose.yml exec colltune cat /var/lib/colltune/admin.token
# scripts/check-docker-layout sources this file (functions only) to test ensure_token.
set -euo pipefail

role="${1:-colltune}"
nodes="${DEMO_NODES:-c1 c2}"            # slurmd hostnames
node_cpus="${DEMO_NODE_CPUS:-2}"
shared_key=/etc/munge-shared/munge.key  # volume shared by every container

say() { printf 'entrypoint[%s]: %s\n' "$role" "$*"; }

write_slurm_conf() {
  local node_list
  node_list="$(printf '%s\n' "$nodes" | tr -s ' ' ',')"
  install -d -m 0755 /etc/slurm /var/spool/slurmctld /var/spool/slurmd /var/log/slurm
  cat >/etc/slurm/slurm.conf <<CONF
# written by docker/entrypoint.sh (same settings as slurm/dev-cluster, several nodes)
ClusterName=colltune-demo
SlurmctldHost=slurmctld
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
MailProg=/bin/true
StateSaveLocation=/var/spool/slurmctld
SlurmdSpoolDir=/var/spool/slurmd
SlurmctldPort=6817
SlurmdPort=6818
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SwitchType=switch/none
MpiDefault=none
ReturnToService=2
SchedulerType=sched/backfill
SchedulerParameters=batch_sched_delay=0
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
SlurmdParameters=config_overrides
# sacct -c in the colltune container reads this file through the shared slurm-log volume
JobCompType=jobcomp/filetxt
JobCompLoc=/var/log/slurm/jobcomp.log
AccountingStorageType=accounting_storage/none
JobAcctGatherType=jobacct_gather/none
MinJobAge=300
KillWait=5
InactiveLimit=0
Waittime=0
SlurmctldTimeout=30
SlurmdTimeout=60
NodeName=$node_list CPUs=$node_cpus State=UNKNOWN
PartitionName=demo Nodes=$node_list Default=YES MaxTime=INFINITE State=UP OverSubscribe=EXCLUSIVE
CONF
}

start_munge() {
  install -d -o munge -g munge -m 0700 /etc/munge /var/log/munge
  install -d -o munge -g munge -m 0711 /var/lib/munge
  install -d -o munge -g munge -m 0755 /run/munge
  install -d -m 0755 "$(dirname "$shared_key")"
  if [ ! -s "$shared_key" ]; then
    # First container up creates the key; the others wait for it.
    if [ "$role" = slurmctld ]; then
      say "creating the shared munge key"
      /usr/sbin/mungekey --create --keyfile="$shared_key.tmp" && mv -f "$shared_key.tmp" "$shared_key"
    else
      for _ in $(seq 1 300); do [ -s "$shared_key" ] && break; sleep 0.2; done
      [ -s "$shared_key" ] || { say "no munge key on the shared volume after 60 s"; exit 1; }
    fi
  fi
  install -o munge -g munge -m 0400 "$shared_key" /etc/munge/munge.key
  runuser -u munge -- /usr/sbin/munged
}

# Sets COLLTUNE_TOKENS (the digest entry the daemon accepts) unless given; the token itself is
# written once to $1/admin.token and its config entry to $1/admin.token.json.
ensure_token() {
  local dir="$1" out
  [ -n "${COLLTUNE_TOKENS:-}" ] && return 0
  if [ ! -s "$dir/admin.token.json" ]; then
    out="$(colltune token new --role admin --name docker-admin)"
    (umask 077
     sed -n 's/^token: //p' <<<"$out" >"$dir/admin.token"
     sed -n 's/^  "tokens": \[\(.*\)\]$/\1/p' <<<"$out" >"$dir/admin.token.json")
    say "admin token written to $dir/admin.token (shown once more here): $(cat "$dir/admin.token")"
  fi
  COLLTUNE_TOKENS="[$(cat "$dir/admin.token.json")]"
  export COLLTUNE_TOKENS
}

wait_for_controller() {
  for _ in $(seq 1 300); do
    scontrol ping 2>/dev/null | grep -q 'is UP' && return 0
    sleep 0.2
  done
  say "slurmctld does not answer after 60 s"
  exit 1
}

# Sourced (by the layout check): functions only.
[ "${BASH_SOURCE[0]}" != "$0" ] && return 0

write_slurm_conf
start_munge
case "$role" in
  slurmctld)
    say "starting slurmctld in the foreground"
    exec /usr/sbin/slurmctld -D
    ;;
  slurmd)
    wait_for_controller
    say "starting slurmd $(hostname -s) in the foreground"
    exec /usr/sbin/slurmd -D -N "$(hostname -s)"
    ;;
  colltune)
    wait_for_controller
    install -d -m 0755 /var/lib/colltune/rules /var/lib/colltune/jobs
    ensure_token /var/lib/colltune
    say "starting the colltune daemon (/etc/colltune/colltune.json) with the slurm backend"
    # job_root is on the volume the slurmd containers mount at the same path. The dashboard is
    # the one the .deb installed (<datadir>/colltune/web), found by the daemon itself.
    default_backends="{\"slurm\": $(cat /etc/colltune/slurm-demo.json)}"
    exec colltune serve --config /etc/colltune/colltune.json \
      --backends "${COLLTUNE_DEMO_BACKENDS:-$default_backends}"
    ;;
  *)
    exec "$@"
    ;;
esac
