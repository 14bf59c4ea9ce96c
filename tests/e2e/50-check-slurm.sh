#!/usr/bin/env bash
# 50-check-slurm: 'rdmaprobe check' against a real Slurm (munged, slurmctld, slurmd from Debian's
# packages, one node: this VM). Healthy: exit 0, both rxe ports looped back at once, the node stays
# idle with no reason. Then rxe1's link down (fabric.sh fault down): exit 1, the first line is the
# drain reason naming rxe1:1 DOWN, and --slurm-drain --apply drains the node with exactly that reason
# as 'sinfo -R' shows it. The NHC check file (scripts/nhc/rdmaprobe.nhc), sourced with NHC's die/log
# contract, passes the healthy node and dies with the same reason on the faulty one.
# fabric: br0:0,1
# timeout: 240
set -uo pipefail
. "$RP_ROOT/scripts/testbed/e2e-lib.sh"
SL="$RP_ROOT/scripts/testbed/slurm.sh"
export SLURM_CONF=/tmp/slurm/slurm.conf
trap 'cp -r /tmp/slurm/log "$RP_RESULTS/slurm-log" 2>/dev/null; bash "$SL" down' EXIT
bash "$SL" up >"$RP_RESULTS/slurm-up.log" 2>&1 || { cat "$RP_RESULTS/slurm-up.log"; e2e_fail "slurm.sh up failed"; }
node=$(hostname -s)
e2e_note "slurm up, node $node idle"

# NHC's contract, as its scripts see it: die FAILCOUNT MESSAGE records the failure, log records a note.
NHC_DIED=""
die() { NHC_DIED="$2"; return 1; }
log() { :; }
. "$RP_ROOT/scripts/nhc/rdmaprobe.nhc"
export RDMAPROBE="$RP_BIN"
CK=(--nccl-version 2.28.9 --budget 30s)

"$RP_BIN" check "${CK[@]}" --slurm-drain --apply --json >"$RP_RESULTS/healthy.json" 2>"$RP_RESULTS/healthy.err"
rc=$?
[ $rc -eq 0 ] || { cat "$RP_RESULTS/healthy.err"; head -c 3000 "$RP_RESULTS/healthy.json"; e2e_fail "healthy check exited $rc"; }
python3 - "$RP_RESULTS/healthy.json" <<'PY' || exit 1
import json, sys
j = json.load(open(sys.argv[1]))
assert j["status"] == "healthy" and j["drain_reason"] is None and j["drain"] is None, (j["status"], j["problems"])
assert not [p for p in j["problems"] if p["severity"] == "fail"], j["problems"]
lb = j["loopback"]
assert sorted(p["src"]["device"] for p in lb) == ["rxe0", "rxe1"], lb
for p in lb:
    assert p["status"] == "ok" and p["src"]["device"] == p["dst"]["device"] and p["verified"], p
print("ok: healthy, rxe0 and rxe1 looped back at once, elapsed %.1f s of %.0f" % (j["elapsed_s"], j["budget_s"]))
PY
[ "$(sinfo -h -n "$node" -o %T)" = idle ] || e2e_fail "healthy node is not idle: $(sinfo -h -n "$node" -o %T)"
[ -z "$(sinfo -R -h)" ] || e2e_fail "healthy node has a reason: $(sinfo -R)"
check_rdmaprobe "${CK[@]}" || e2e_fail "NHC check failed a healthy node: $NHC_DIED"
e2e_note "healthy: exit 0, idle, no reason; NHC check passes"

bash "$RP_FABRIC" fault down rxe1 || e2e_fail "fault down rxe1 failed"
for _ in $(seq 1 50); do [ "$(e2e_port_state rxe1)" = DOWN ] && break; sleep 0.2; done
"$RP_BIN" check "${CK[@]}" --slurm-drain --apply >"$RP_RESULTS/down.txt" 2>"$RP_RESULTS/down.err"
rc=$?
cat "$RP_RESULTS/down.txt"
[ $rc -eq 1 ] || { cat "$RP_RESULTS/down.err"; e2e_fail "check with rxe1 down exited $rc, not 1"; }
reason=$(head -n 1 "$RP_RESULTS/down.txt")
case $reason in "rdmaprobe: rxe1:1 DOWN"*) ;; *) e2e_fail "first line is not the rxe1:1 DOWN drain reason: $reason" ;; esac
grep -qx "drained: scontrol update nodename=$node state=drain reason=\"$reason\"" "$RP_RESULTS/down.txt" ||
	e2e_fail "no 'drained:' line with the command"
sinfo -R >"$RP_RESULTS/sinfo-R.txt"
got=$(sinfo -R -h -o '%E|%N')
[ "$got" = "$reason|$node" ] || { cat "$RP_RESULTS/sinfo-R.txt"; e2e_fail "sinfo -R shows '$got', not '$reason|$node'"; }
st=$(sinfo -h -n "$node" -o %T)
case $st in drained|draining) ;; *) e2e_fail "node state is '$st', not drained" ;; esac
NHC_DIED=""
check_rdmaprobe "${CK[@]}" && e2e_fail "NHC check passed a node with rxe1 down"
[ "$NHC_DIED" = "$reason" ] || e2e_fail "NHC died with '$NHC_DIED', not '$reason'"
e2e_note "rxe1 down: exit 1, sinfo -R: '$got', state $st; NHC dies with the same reason"
bash "$RP_FABRIC" fault clear rxe1
