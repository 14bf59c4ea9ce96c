#!/usr/bin/env bash
# fabric: br0:0,1,2
# timeout: 240
# Issue 26 item 17 on real ranks (3 ranks, node N on rxeN): Ctrl-C on mpirun (SIGINT to its process
# group; mpirun sends SIGTERM to every rank and SIGKILL a second later). The verdict is on stdout
# (INTERRUPTED, FAIL, the coverage line) and the JSON is the final one (coverage, interrupted, the
# verdict); it agrees with itself: its pairs are the coverage's plus at most the cut round's,
# rounds_run >= rounds_done, no "round k of 3 done" line past the rounds done. Before: stdout empty,
# the JSON without its coverage.
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

echo "PASS"
