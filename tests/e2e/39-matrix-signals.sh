#!/usr/bin/env bash
# fabric: br0:0,1,2,3
# timeout: 240
# Signals. (1) SIGTERM to one non-zero rank (rank 2) mid-run: every rank stops at the next safe point
# (the end of the round; rank 2's report says so and rank 0 tells every rank), nobody hangs, each
# rank exits 143 (128 + SIGTERM), and the JSON is valid, marked interrupted, with the finished pairs
# (every pair in it ok and verified; pairs not measured because of the stop are left out, so they
# never count against an adapter; those of the cut round that had finished are kept). mpirun --enable-recovery keeps every rank running to its own exit
# (without it mpirun kills the job once the first rank exits non-zero). (2) SIGINT to mpirun (which
# sends SIGTERM to every rank, then SIGKILL a second later): the JSON left behind is valid and holds
# the finished rounds' pairs, all ok and verified.
set -uo pipefail
. "$RP_ROOT/tests/e2e/lib/matrix.sh"
mx_need
out=$RP_RESULTS/39
mkdir -p "$out"
rm -f "$out"/*.json "$out"/rank*.rc "$out"/rank*.pid

wait_for() {   # wait_for FILE: up to 120 s
	for _ in $(seq 1 600); do [ -e "$1" ] && return 0; sleep 0.2; done
	return 1
}

# (1) SIGTERM to rank 2 only
MX_MPIRUN_FLAGS=--enable-recovery RP_MX_STATUS_DIR=$out RP_MX_PID_DIR=$out mx_mpirun 4 -s 4K -n 3000 --timeout 2 --min-bw 0 --outlier 0 \
	--json "$out/term.json" >"$out/term.out" 2>"$out/term.err" &
job=$!
wait_for "$out/term.json" || { echo "FAIL: no JSON after the first round"; kill "$job"; exit 1; }
sleep 0.3
kill -TERM "$(cat "$out/rank2.pid")"
wait "$job"
rc=$?
echo "mpirun exit $rc; ranks: $(cat "$out"/rank*.rc | tr '\n' ' ')"
cat "$out/term.out"
grep "rdmaprobe matrix" "$out/term.err" | head -20
for r in 0 1 2 3; do
	[ "$(cat "$out/rank$r.rc" 2>/dev/null)" = 143 ] || { echo "FAIL: rank $r exit $(cat "$out/rank$r.rc" 2>/dev/null), want 143"; exit 1; }
done
grep -q "^INTERRUPTED by signal 15" "$out/term.out" || { echo "FAIL: stdout does not say it was interrupted"; exit 1; }
mx_check "$out/term.json" '
m = d["matrix"]
assert m["interrupted"] is True and m["signal"] == 15 and not m["complete"], m
assert 1 <= m["rounds_done"] < 3, m
# every direction of the rounds done, and those of the round the stop cut short that had finished
assert 4 * m["rounds_done"] <= len(pairs) <= 4 * (m["rounds_done"] + 1), len(pairs)
assert all(p["status"] == "ok" and p["verified"] for p in pairs), pairs
assert all(n["drain"] == [] for n in d["nodes"]), d["nodes"]
assert d["verdict"]["pass"] is False
' || { echo "FAIL: JSON after SIGTERM to rank 2"; exit 1; }

# (2) SIGINT to mpirun's process group, as Ctrl-C sends it (job control on: the background job gets
# a process group of its own and does not ignore SIGINT)
set -m
mx_mpirun 4 -s 4K -n 3000 --timeout 2 --min-bw 0 --outlier 0 --json "$out/int.json" >"$out/int.out" 2>"$out/int.err" &
job=$!
set +m
wait_for "$out/int.json" || { echo "FAIL: no JSON after the first round"; kill "$job"; exit 1; }
sleep 0.3
kill -INT -- -"$job"
wait "$job"
rc=$?
echo "mpirun exit $rc after SIGINT"
cat "$out/int.out"
grep "rdmaprobe matrix" "$out/int.err" | head -20
[ $rc -ne 0 ] || { echo "FAIL: an interrupted matrix exited 0"; exit 1; }
mx_check "$out/int.json" '
m = d["matrix"]
assert not m["complete"] and 1 <= m["rounds_done"] < 3, m
assert 4 * m["rounds_done"] <= len(pairs) <= 4 * (m["rounds_done"] + 1), len(pairs)
assert all(p["status"] == "ok" and p["verified"] for p in pairs), pairs
' || { echo "FAIL: JSON after SIGINT to mpirun"; exit 1; }
echo "PASS"
