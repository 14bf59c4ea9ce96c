#!/usr/bin/env bash
# fabric: br0:0,1,2
# timeout: 400
# Issue 26 item 16 on real ranks (3 ranks, node N on rxeN): SIGTERM to rank 2 alone mid-run, without
# mpirun --enable-recovery and with it: mpirun ends (a deadline of 120 s for "it ended at all", far
# above the run's --timeout 2), with recovery every rank's exit is 143, the JSON says interrupted.
# Before, mpirun was still running 150 s later (ranks waiting in MPI_Finalize).
set -uo pipefail
. "$RP_ROOT/tests/e2e/lib/matrix.sh"
mx_need
out=$RP_RESULTS/63
mkdir -p "$out"

wait_for() {   # wait_for FILE: up to 120 s
	for _ in $(seq 1 600); do [ -e "$1" ] && return 0; sleep 0.2; done
	return 1
}

# wait_gone PID SECONDS: 0 when PID ended within SECONDS
wait_gone() {
	for _ in $(seq 1 $(($2 * 5))); do kill -0 "$1" 2>/dev/null || return 0; sleep 0.2; done
	return 1
}

for flags in "" --enable-recovery; do
	rm -f "$out"/rank*.rc "$out"/rank*.pid "$out/term.json"
	MX_MPIRUN_FLAGS=$flags RP_MX_STATUS_DIR=$out RP_MX_PID_DIR=$out mx_mpirun 3 -s 4K -n 20000 --timeout 2 --min-bw 0 \
		--outlier 0 --json "$out/term.json" >"$out/term$flags.out" 2>"$out/term$flags.err" &
	job=$!
	wait_for "$out/term.json" || { echo "FAIL: no JSON after the first round"; kill "$job"; exit 1; }
	sleep 0.3
	kill -TERM "$(cat "$out/rank2.pid")"
	wait_gone "$job" 120 || { echo "FAIL ($flags): mpirun still runs 120 s after SIGTERM to rank 2"; \
		ps -ef | grep -v grep | grep rdmaprobe; kill -9 "$job"; exit 1; }
	wait "$job"
	echo "mpirun${flags:+ $flags} exit $?; ranks: $(cat "$out"/rank*.rc 2>/dev/null | tr '\n' ' ')"
	grep "rdmaprobe" "$out/term$flags.err" | head -20
	if [ -n "$flags" ]; then   # with recovery every rank runs to its own end
		for r in 0 1 2; do
			[ "$(cat "$out/rank$r.rc" 2>/dev/null)" = 143 ] || { echo "FAIL: rank $r exit $(cat "$out/rank$r.rc" 2>/dev/null), want 143"; exit 1; }
		done
	fi
	mx_check "$out/term.json" 'assert d["matrix"]["interrupted"] is True and not d["matrix"]["complete"], d["matrix"]' ||
		{ echo "FAIL: JSON after SIGTERM to rank 2 ($flags)"; exit 1; }
done
echo "PASS"
