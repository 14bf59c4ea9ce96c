#!/usr/bin/env bash
# fabric: br0:0,1,2
# timeout: 420
# Issue 26 items 8, 16, 17 on real ranks (3 ranks, node N on rxeN).
# (1) item 8: rank 1's --node is not UTF-8: the JSON is written (it was lost: "could not write",
#     exit 3), the name with '?' for the bad byte, in the endpoints and every rank's NCCL release.
# (2) item 17: Ctrl-C on mpirun (SIGINT to its process group; mpirun sends SIGTERM to every rank and
#     SIGKILL a second later): the verdict is on stdout (INTERRUPTED, FAIL, the coverage line), the
#     JSON is the final one (coverage, interrupted, the verdict), and it agrees with itself: the
#     pairs are the coverage's plus at most the cut round's, rounds_run >= rounds_done.
# (3) item 16: SIGTERM to rank 2 alone, without --enable-recovery and with it: mpirun ends (a
#     deadline of 120 s for "it ended at all", far above the run's --timeout 2), every rank's exit
#     143, the JSON interrupted. Before, mpirun was still running 150 s later.
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

# (1)
RP_MX_BADNAME_RANK=1 mx_mpirun 3 -s 4K -n 100 --timeout 2 --min-bw 0 --outlier 0 --json "$out/bad.json" \
	>"$out/bad.out" 2>"$out/bad.err"
rc=$?
cat "$out/bad.out"
grep -q "could not write" "$out/bad.err" && { echo "FAIL: a node name that is not UTF-8 lost a report"; exit 1; }
[ $rc -eq 0 ] || { echo "FAIL: exit $rc"; tail -20 "$out/bad.err"; exit 1; }
"$MX_PY" - "$out/bad.json" <<'PY' || { echo "FAIL: JSON with a node name that is not UTF-8"; exit 1; }
import json, sys
d = json.load(open(sys.argv[1]))
names = sorted(e["node"] for e in d["matrix"]["endpoints"])
assert names == ["bad?name", "node0", "node2"], names
assert sorted(v["node"] for v in d["nccl_versions"]) == ["bad?name", "node0", "node2"], d["nccl_versions"]
assert len(d["pairs"]) == 6 and all(p["status"] == "ok" for p in d["pairs"]), d["pairs"]
PY

# (2)
set -m
mx_mpirun 3 -s 4K -n 4000 --timeout 2 --min-bw 0 --outlier 0 --json "$out/int.json" >"$out/int.out" 2>"$out/int.err" &
job=$!
set +m
wait_for "$out/int.json" || { echo "FAIL: no JSON after the first round"; kill "$job"; exit 1; }
sleep 0.3
kill -INT -- -"$job"
wait_gone "$job" 120 || { echo "FAIL: mpirun still runs 120 s after Ctrl-C"; kill -9 -- -"$job"; exit 1; }
wait "$job"
rc=$?
echo "mpirun exit $rc after SIGINT"
cat "$out/int.out"
grep "rdmaprobe matrix" "$out/int.err" | head -20
[ $rc -ne 0 ] || { echo "FAIL: an interrupted matrix exited 0"; exit 1; }
grep -q "^INTERRUPTED by signal 15" "$out/int.out" || { echo "FAIL: the verdict is not on stdout after Ctrl-C"; exit 1; }
grep -q "^FAIL: " "$out/int.out" || { echo "FAIL: no verdict line after Ctrl-C"; exit 1; }
grep -q "^coverage: " "$out/int.out" || { echo "FAIL: no coverage line after Ctrl-C"; exit 1; }
"$MX_PY" - "$out/int.json" <<'PY' || { echo "FAIL: the JSON after Ctrl-C"; exit 1; }
import json, sys
d = json.load(open(sys.argv[1]))
m, cov, pairs = d["matrix"], d["coverage"], d["pairs"]
assert m["interrupted"] is True and m["signal"] == 15 and not m["complete"], m
assert d["verdict"]["pass"] is False, d["verdict"]
assert m["rounds_run"] >= m["rounds_done"], m
assert cov["ordered_pairs_measured"] == 2 * m["rounds_done"], (cov, m)   # full over 3: one pair a round
cut = m["rounds_run"] - m["rounds_done"]
assert cov["ordered_pairs_measured"] <= len(pairs) <= cov["ordered_pairs_measured"] + 2 * cut, (len(pairs), cov, m)
assert d["verdict"]["pairs"] == len(pairs), (d["verdict"], len(pairs))
assert all(p["status"] == "ok" and p["verified"] for p in pairs), pairs
print("ok: rounds_done %d, rounds_run %d, %d pairs, coverage %d" % (m["rounds_done"], m["rounds_run"], len(pairs),
      cov["ordered_pairs_measured"]))
PY
# the progress lines agree with the end: no "round k of 3 done" past the rounds done
done_lines=$(grep -c "rdmaprobe matrix: round [0-9]* of 3 done" "$out/int.err")
rd=$("$MX_PY" -c 'import json, sys; print(json.load(open(sys.argv[1]))["matrix"]["rounds_done"])' "$out/int.json")
[ "$done_lines" -le "$rd" ] || { echo "FAIL: $done_lines 'round k of 3 done' lines, $rd rounds done"; exit 1; }

# (3)
for flags in "" --enable-recovery; do
	rm -f "$out"/rank*.rc "$out"/rank*.pid "$out/term.json"
	MX_MPIRUN_FLAGS=$flags RP_MX_STATUS_DIR=$out RP_MX_PID_DIR=$out mx_mpirun 3 -s 4K -n 4000 --timeout 2 --min-bw 0 \
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
