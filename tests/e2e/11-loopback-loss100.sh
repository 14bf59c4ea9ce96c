#!/usr/bin/env bash
# fabric: br0:0,1
# timeout: 300
# 100% loss on rxe1's link once the devices know each other (static neighbours: resolution and
# RTR/RTS still succeed, the data does not): the pairs crossing that link fail within the deadline;
# the self pairs never touch the wire and stay ok. Exactly: the reachability sweep's screen (at most
# 6 transport retries, lib/matrix/pairset_sweep.h) ends retry_exceeded, and the confirmation, with
# NCCL's retry count of 7, timed_out: rxe reads a retry count of 7 as "for ever" and never completes
# a write with retry exceeded then (perftest hangs the same way in 03-faults), so the no-progress
# deadline is what ends it (NCCL's longer ACK timeout only waits longer).
# --timeout 4: the confirmation of each direction across the link waits out its no-progress deadline
# (the two at once), so that deadline is most of the case's time; 4 s is longer than any healthy
# stall here.
set -u
T=4
"$RP_FABRIC" fault loss rxe1 100% || exit 1
t0=$(date +%s)
"$RP_BIN" loopback -d rxe0,rxe1 -s 4K -n 100 --timeout $T --json "$RP_RESULTS/loss.json" >"$RP_RESULTS/stdout" 2>"$RP_RESULTS/stderr"
rc=$?
t1=$(date +%s)
cat "$RP_RESULTS/stdout"
[ "$rc" -eq 1 ] || { echo "FAIL: exit $rc, expected 1"; tail -20 "$RP_RESULTS/stderr"; exit 1; }
grep -q '^verdict: FAIL (2 of 4 pairs failed: .*; 2 confirmed, 0 unconfirmed;' "$RP_RESULTS/stdout" ||
	{ echo "FAIL: verdict line"; exit 1; }
n=$(grep -c "^    confirmed: failed 2 of 2 attempts (.* with --qp-timeout 14; .* with --qp-timeout 20 (NCCL's); the last decided it)" "$RP_RESULTS/stdout")
[ "$n" -eq 2 ] || { echo "FAIL: $n pairs confirmed under NCCL's ACK timeout, expected 2"; exit 1; }
python3 - "$RP_RESULTS/loss.json" "$T" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
T = float(sys.argv[2])
bad = []
for p in r["pairs"]:
    s, d = p["src"]["device"], p["dst"]["device"]
    if s != d:
        if p["status"] != "timed_out":
            bad.append("%s->%s: %s %s, want timed_out" % (s, d, p["status"], p["reason"]))
        a = [(x["status"], x["qp_timeout"]) for x in p.get("attempts", [])]
        if a != [("retry_exceeded", 14), ("timed_out", 20)]:
            bad.append("%s->%s: attempts %s, want the screen retry_exceeded, the confirmation timed_out" % (s, d, a))
        # the deciding attempt ran with NCCL's timeout: 8 tries of ~4.3 s, plus the phase deadlines
        if p["elapsed_s"] > 8 * 4.3 + 3 * T:
            bad.append("%s->%s took %.1f s" % (s, d, p["elapsed_s"]))
    elif p["status"] != "ok" or not p["verified"]:
        bad.append("self %s: %s %s" % (s, p["status"], p["reason"]))
if bad:
    print("FAIL:\n  " + "\n  ".join(bad))
    sys.exit(1)
print("ok: lossy pairs confirmed as", sorted({p["status"] for p in r["pairs"] if p["src"]["device"] != p["dst"]["device"]}))
PY
[ $? -eq 0 ] || exit 1
echo "whole run: $((t1 - t0)) s"
