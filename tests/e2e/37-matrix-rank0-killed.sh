#!/usr/bin/env bash
# fabric: br0:0,1,2,3
# timeout: 150
# Rank 0 (which keeps the results) is killed (kill -9) after the first round. mpirun aborts the job
# (its default on a dead rank), nobody hangs, and the JSON and HTML files rank 0 rewrote after each
# finished round are whole and valid: nothing measured before the kill is lost.
set -uo pipefail
. "$RP_ROOT/tests/e2e/lib/matrix.sh"
mx_need
out=$RP_RESULTS/37
mkdir -p "$out"
rm -f "$out/m.json"
export RP_MX_KILL_RANK=0 RP_MX_KILL_WHEN=$out/m.json RP_MX_KILL_AFTER=0.5
start=$(date +%s)
mx_mpirun 4 -s 4K -n 2000 --timeout 2 --min-bw 0 --outlier 0 \
	--json "$out/m.json" --html "$out/m.html" >"$out/stdout" 2>"$out/stderr"
rc=$?
echo "mpirun exit $rc after $(( $(date +%s) - start )) s"
grep "rdmaprobe matrix" "$out/stderr" | head
[ $rc -ne 0 ] || { echo "FAIL: the job lost rank 0 but exited 0"; exit 1; }
mx_check "$out/m.json" '
m = d["matrix"]
assert 1 <= m["rounds_done"] < 3 and not m["complete"], m
assert len(pairs) == 4 * m["rounds_done"], len(pairs)
assert all(p["status"] == "ok" and p["verified"] for p in pairs), pairs
assert d["verdict"]["pass"] is False
' || { echo "FAIL: the file left behind"; exit 1; }
if command -v xmllint >/dev/null; then
	xmllint --html --noout "$out/m.html" 2>/dev/null || { echo "FAIL: the HTML left behind does not parse"; exit 1; }
	grep -q '</html>' "$out/m.html" || { echo "FAIL: the HTML left behind is cut"; exit 1; }
fi
echo "PASS"
