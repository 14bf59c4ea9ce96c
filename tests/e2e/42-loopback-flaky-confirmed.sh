#!/usr/bin/env bash
# fabric: br0:0,1,2
# timeout: 200
# --retest made deterministic in loopback:
# 1. flaky: rxe1's link passes nothing (100% loss) for the first attempt of its pairs and is clear
#    before the retests (the loopback is held with SIGSTOP while the fault is cleared, right after
#    the second crossing pair failed; the self pairs never touch the wire). Both crossing pairs are
#    `flaky`: ok, with both attempts (timed_out under the probe's ACK timeout, ok under NCCL's) and
#    the flaky warning; the verdict passes, nothing is drained, exit 0.
# 2. confirmed: rxe2's link stays lossy: its 4 pairs fail both attempts (timed_out, retested with
#    NCCL's ACK timeout), `confirmed`; rxe2 reached no peer and is drained, rxe0 and rxe1 are not;
#    exit 1.
# --sweep off: this case is about the retest of a pair measured one at a time (the sweep, which
# probes every direction at once first, has 43-loopback-dead-adapter).
# --interval-drop 0 --outlier 0: the retest of a flaky pair may stall a moment on its first write,
# and the self pair that runs while the loopback is held is slow; this case is about the retest of
# a fault, not the interval or outlier rules (40-pair-link-stall, 10-loopback-fabric are).
set -u
. "$RP_ROOT/scripts/testbed/e2e-lib.sh"
R=$RP_RESULTS
fail() { tail -n 40 "$R"/*.err "$R"/*.out 2>/dev/null; e2e_fail "$*"; }

"$RP_FABRIC" fault loss rxe1 100%
# --timeout 5: even a retest whose first write went out just before the clear is retransmitted
# (NCCL's ACK timeout, 4.3 s) before its no-progress deadline
"$RP_BIN" loopback -d rxe0,rxe1 -s 16K -n 1000 --timeout 5 --interval-drop 0 --outlier 0 --sweep off --json "$R/flaky.json" \
	>"$R/flaky.out" 2>"$R/flaky.err" &
pid=$!
for _ in $(seq 1 1200); do
	[ "$(grep -c '^\[[0-9]/4\] timed_out' "$R/flaky.err")" -ge 2 ] && break
	kill -0 $pid 2>/dev/null || break
	sleep 0.05
done
kill -STOP $pid || fail "loopback ended before both crossing pairs failed"
"$RP_FABRIC" fault clear rxe1
kill -CONT $pid
wait $pid
rc=$?
cat "$R/flaky.out"
grep '^\[' "$R/flaky.err"
[ $rc -eq 0 ] || fail "flaky: exit $rc, want 0"
grep -q '^verdict: PASS (4 of 4 pairs ok and verified; 2 flaky,' "$R/flaky.out" || fail "flaky: verdict line"
grep -q '^drain:' "$R/flaky.out" && fail "flaky: something was drained"
python3 - "$R/flaky.json" <<'PY' || fail "flaky: report"
import json, sys
for p in json.load(open(sys.argv[1]))["pairs"]:
    s, d = p["src"]["device"], p["dst"]["device"]
    a = [(x["status"], x["qp_timeout"]) for x in p["attempts"]]
    print(s, "->", d, p["status"], p["confirm"], p["warnings"], a)
    assert p["status"] == "ok" and p["verified"], p
    if s == d:
        assert p["confirm"] is None and a == [("ok", 14)], p
    else:
        assert p["confirm"] == "flaky" and a == [("timed_out", 14), ("ok", 20)], p
        assert set(p["warnings"]) == {"flaky", "nominal_link_rate"}, p["warnings"]
PY
e2e_note "flaky part done"

"$RP_FABRIC" fault loss rxe2 100%
"$RP_BIN" loopback -d rxe0,rxe1,rxe2 --no-self -s 4K -n 100 --timeout 3 --interval-drop 0 --outlier 0 --sweep off --json "$R/conf.json" \
	>"$R/conf.out" 2>"$R/conf.err"
rc=$?
cat "$R/conf.out"
[ $rc -eq 1 ] || fail "confirmed: exit $rc, want 1"
grep -q '^verdict: FAIL (4 of 6 pairs failed: timed_out 4; 4 confirmed, 0 unconfirmed; 0 flaky,' "$R/conf.out" ||
	fail "confirmed: verdict line"
[ "$(grep -c '^drain:' "$R/conf.out")" -eq 1 ] && grep -q '^drain: rxe2:1 on .* (reached no peer: all 4 pairs failed)' "$R/conf.out" ||
	fail "confirmed: rxe2 and only rxe2 should be drained"
python3 - "$R/conf.json" <<'PY' || fail "confirmed: report"
import json, sys
for p in json.load(open(sys.argv[1]))["pairs"]:
    s, d = p["src"]["device"], p["dst"]["device"]
    a = [(x["status"], x["qp_timeout"]) for x in p["attempts"]]
    print(s, "->", d, p["status"], p["confirm"], a)
    if "rxe2" in (s, d):
        assert p["status"] == "timed_out" and p["confirm"] == "confirmed", p
        assert a == [("timed_out", 14), ("timed_out", 20)], a
    else:
        assert p["status"] == "ok" and p["confirm"] is None and a == [("ok", 14)], p
PY
echo "ok: flaky when the fault is gone before the retest, confirmed and drained when it stays"
