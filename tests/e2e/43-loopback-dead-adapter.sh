#!/usr/bin/env bash
# fabric: br0:0,1,2,3
# timeout: 240
# Issue 29: loopback over 4 adapters, one dead (100% loss on rxe3's link), --no-self (a self pair
# never leaves the device: with it rxe3 would move data with itself and be a rail of its own, which
# drains nothing, 10-loopback-fabric). The reachability sweep probes all 12 directions at once,
# probes rxe3's 6 again at once (NCCL's ACK timeout and retry count, the full --timeout, the MTU
# probe beside each), and measures no bandwidth on them: each has both probes as its attempts (the
# screen's retry_exceeded: it gives up after 6 retries; the confirmation's timed_out: rxe retries for
# ever at 7), confirmed; rxe3 is drained (it reached no peer), the other 6 directions are ok.
# The times of the healthy run and the run with the dead adapter are printed, not asserted; the
# figures for results/ (with the `--sweep off` run beside them, ~85 s under TCG) are
# scripts/bench-loopback-dead.sh's, a benchmark run in one boot.
set -u
. "$RP_ROOT/scripts/testbed/e2e-lib.sh"
R=$RP_RESULTS
run() {   # name, extra options
	local t0 t1 rc
	t0=$(date +%s.%N)
	"$RP_BIN" loopback -d rxe0,rxe1,rxe2,rxe3 --no-self -s 4K -n 200 --timeout 5 --outlier 0 --interval-drop 0 $2 \
		--json "$R/$1.json" >"$R/$1.out" 2>"$R/$1.err"
	rc=$?
	t1=$(date +%s.%N)
	echo "$rc" >"$R/$1.rc"
	echo "e2e: time $1: $(awk "BEGIN { printf \"%.1f\", $t1 - $t0 }") s (exit $rc)"
}
run healthy ""
[ "$(cat "$R/healthy.rc")" -eq 0 ] || { tail -20 "$R/healthy.out" "$R/healthy.err"; e2e_fail "healthy run: exit $(cat "$R/healthy.rc")"; }
"$RP_FABRIC" fault loss rxe3 100% || e2e_fail "could not inject loss"
run dead ""
"$RP_FABRIC" fault clear rxe3
cat "$R/dead.out"
grep '^\[sweep\]' "$R/dead.err"
[ "$(cat "$R/dead.rc")" -eq 1 ] || e2e_fail "dead run: exit $(cat "$R/dead.rc"), want 1"
grep -q '^\[sweep\] 6 dead' "$R/dead.err" || e2e_fail "the sweep should find rxe3's 6 crossing directions dead"
grep -q '^drain: rxe3:1 on .* (reached no peer' "$R/dead.out" || e2e_fail "rxe3 should be drained"
[ "$(grep -c '^drain:' "$R/dead.out")" -eq 1 ] || e2e_fail "only rxe3 should be drained"
python3 - "$R/dead.json" <<'PY' || e2e_fail "report"
import json, sys
pairs = json.load(open(sys.argv[1]))["pairs"]
assert len(pairs) == 12, len(pairs)
for p in pairs:
    s, d = p["src"]["device"], p["dst"]["device"]
    a = [(x["status"], x["qp_timeout"]) for x in p["attempts"]]
    print(s, "->", d, p["status"], p["confirm"], a)
    if (s == "rxe3") != (d == "rxe3"):
        assert p["status"] == "timed_out" and p["confirm"] == "confirmed", p
        assert a == [("retry_exceeded", 14), ("timed_out", 20)], a
        assert p["reason"].startswith("reachability sweep: "), p["reason"]
        assert not p["verified"], p
    else:
        assert p["status"] == "ok" and p["verified"], p
PY
echo "ok: the dead adapter decided by the sweep in two probe windows, the rest measured"
