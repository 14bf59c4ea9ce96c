#!/usr/bin/env bash
# slurm.sh: a one-node Slurm (munged, slurmctld, slurmd from Debian's packages) inside the test VM.
#   slurm.sh up      start munged, slurmctld and slurmd for this host (NodeName = hostname -s) and wait
#                    until the node is idle; prints the SLURM_CONF to export
#   slurm.sh down    stop them
# The host's / is read-only in the guest: key, config, state, spool, logs and sockets all live under
# $RP_SLURM_DIR (default /tmp/slurm, the guest's tmpfs). Everything runs as root (SlurmUser=root).
set -euo pipefail
S=${RP_SLURM_DIR:-/tmp/slurm}
node=$(hostname -s)

die() { echo "slurm.sh: $*" >&2; exit 1; }

up() {
	[ "$node" = rp-testbed ] || [ -n "${RP_SLURM_ANYWHERE:-}" ] ||
		die "refusing to run outside the test VM (hostname $node; RP_SLURM_ANYWHERE=1 to insist)"
	for b in munged slurmctld slurmd sinfo scontrol; do
		command -v "$b" >/dev/null || die "$b not installed (scripts/install-deps.sh: munge slurmctld slurmd slurm-client)"
	done
	rm -rf "$S"   # a fresh cluster: no node state (a drain) carried over from an earlier up
	mkdir -p "$S"/{state,spool,log,run,munge}
	chmod 700 "$S/munge"
	head -c 1024 /dev/urandom >"$S/munge/munge.key"
	chmod 400 "$S/munge/munge.key"
	munged --force --key-file="$S/munge/munge.key" --socket="$S/munge/munge.socket" \
		--pid-file="$S/munge/munged.pid" --log-file="$S/log/munged.log" --seed-file="$S/munge/seed" ||
		die "munged did not start: $(tail -n 3 "$S/log/munged.log" 2>/dev/null)"
	# slurmd needs a cgroup file system even with proctrack/linuxproc; no systemd in the guest
	if ! grep -q " /sys/fs/cgroup " /proc/mounts; then
		mount -t cgroup2 none /sys/fs/cgroup || die "cannot mount cgroup2 on /sys/fs/cgroup"
	fi
	mkdir -p /sys/fs/cgroup/system.slice   # where cgroup/v2 without systemd puts slurmstepd's scope
	printf 'CgroupPlugin=cgroup/v2\nIgnoreSystemd=yes\n' >"$S/cgroup.conf"
	cat >"$S/slurm.conf" <<CONF
ClusterName=rptest
SlurmctldHost=$node(127.0.0.1)
AuthType=auth/munge
AuthInfo=socket=$S/munge/munge.socket
CredType=cred/munge
SlurmUser=root
SlurmdUser=root
StateSaveLocation=$S/state
SlurmdSpoolDir=$S/spool
SlurmctldPidFile=$S/run/slurmctld.pid
SlurmdPidFile=$S/run/slurmd.pid
SlurmctldLogFile=$S/log/slurmctld.log
SlurmdLogFile=$S/log/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
MpiDefault=none
ReturnToService=2
SlurmdTimeout=30
NodeName=$node NodeAddr=127.0.0.1 CPUs=$(nproc) State=UNKNOWN
PartitionName=rp Nodes=ALL Default=YES MaxTime=INFINITE State=UP
CONF
	export SLURM_CONF="$S/slurm.conf"
	slurmctld -f "$SLURM_CONF" -c || die "slurmctld did not start: $(tail -n 5 "$S/log/slurmctld.log" 2>/dev/null)"
	slurmd -f "$SLURM_CONF" || die "slurmd did not start: $(tail -n 5 "$S/log/slurmd.log" 2>/dev/null)"
	for _ in $(seq 1 60); do
		st=$(sinfo -h -n "$node" -o %T 2>/dev/null || true)
		[ "$st" = idle ] && { echo "SLURM_CONF=$SLURM_CONF"; return 0; }
		sleep 0.5
	done
	die "node $node not idle after 30 s (state '${st:-?}'): $(tail -n 5 "$S/log/slurmctld.log") $(tail -n 5 "$S/log/slurmd.log")"
}

down() {
	local pids=()
	for p in "$S/run/slurmd.pid" "$S/run/slurmctld.pid" "$S/munge/munged.pid"; do
		[ -f "$p" ] && pids+=("$(cat "$p")")
	done
	[ ${#pids[@]} -gt 0 ] || return 0
	kill "${pids[@]}" 2>/dev/null || true
	for _ in $(seq 1 50); do   # their ports and sockets free before a next up
		kill -0 "${pids[@]}" 2>/dev/null || return 0
		sleep 0.2
	done
}

case "${1:-}" in
up) up ;;
down) down ;;
*) echo "usage: slurm.sh up|down" >&2; exit 2 ;;
esac
