#!/usr/bin/env bash
# fabric: br0:0,1,2
# timeout: 300
# The port counters decide what bandwidth cannot: with 5% netem loss on rxe1's link, every pair
# across it still moves and verifies its data (--min-bw 0 --outlier 0 take the bandwidth rules out,
# so only the counter rule speaks) and must come out ok but "lossy", with the retransmission
# counters that moved (rxe: completer_retry_err at the writer, out_of_seq_request/duplicate_request
# at the target, tests/e2e/04-devices-health.sh) in "counters". The pairs off that link (rxe0<->rxe2,
# the self pairs) carry no lossy warning. Then the fault is cleared and a second run on the clean
# fabric has no lossy warning at all. Not exact: which retransmission counter moves on which side
# (rxe recovers a loss by a NAK or by the ACK timeout), only that a retrans counter moved.
set -u
BIN=${RP_BIN:?RP_BIN not set}
fail() { echo "FAIL: $*"; exit 1; }

"$RP_FABRIC" fault loss rxe1 5% || exit 1
"$BIN" loopback -d rxe0,rxe1,rxe2 -s 4K -n 500 --timeout 10 --min-bw 0 --outlier 0 --retest 0 \
	--json "$RP_RESULTS/loss5.json" >"$RP_RESULTS/stdout" 2>"$RP_RESULTS/stderr"
rc=$?
cat "$RP_RESULTS/stdout"
[ "$rc" -eq 0 ] || { tail -20 "$RP_RESULTS/stderr"; fail "lossy run exited $rc, expected 0 (bandwidth passes)"; }
grep -Eq '^verdict: PASS .*[1-9][0-9]* lossy' "$RP_RESULTS/stdout" || fail "the verdict line counts no lossy pair"
"$RP_FABRIC" fault clear rxe1 || exit 1
"$BIN" loopback -d rxe0,rxe1,rxe2 -s 4K -n 500 --timeout 10 --min-bw 0 --outlier 0 --retest 0 \
	--json "$RP_RESULTS/clean.json" >"$RP_RESULTS/stdout.clean" 2>"$RP_RESULTS/stderr.clean"
rc=$?
cat "$RP_RESULTS/stdout.clean"
[ "$rc" -eq 0 ] || fail "clean run exited $rc"
grep -q 'lossy:' "$RP_RESULTS/stdout.clean" && fail "a lossy warning on the clean fabric"
python3 - "$RP_RESULTS/loss5.json" "$RP_RESULTS/clean.json" <<'PY'
import json, sys
RETRANS = {"completer_retry_err", "out_of_seq_request", "duplicate_request", "rcvd_seq_err", "retry_exceeded_err"}
bad = []
for path, lossy_run in ((sys.argv[1], True), (sys.argv[2], False)):
    r = json.load(open(path))
    if len(r["pairs"]) != 9:
        bad.append("%s: %d pairs" % (path, len(r["pairs"])))
    for p in r["pairs"]:
        s, d = p["src"]["device"], p["dst"]["device"]
        name = "%s %s->%s" % ("loss5" if lossy_run else "clean", s, d)
        across = lossy_run and "rxe1" in (s, d) and s != d
        ctr = p.get("counters", {})
        moved = {}
        for side in ("src", "dst"):
            c = ctr.get(side)
            if c is None:
                bad.append("%s: %s counters not measured" % (name, side))
                continue
            for k, v in list(c["moved"].items()) + list(c["at_least"].items()):
                moved["%s:%s" % (side, k)] = v
        retrans = {k: v for k, v in moved.items() if k.split(":", 1)[1] in RETRANS}
        print("%s: %s %s %s retrans=%s" % (name, p["status"], p["warnings"], "%.3f" % p["gbps"], retrans))
        if p["status"] != "ok" or not p["verified"]:
            bad.append("%s: %s, verified %s (bandwidth must pass)" % (name, p["status"], p["verified"]))
        if across:
            if "lossy" not in p["warnings"]:
                bad.append("%s: across the lossy link, no lossy warning" % name)
            if not retrans:
                bad.append("%s: lossy without a retransmission counter in counters" % name)
        elif "lossy" in p["warnings"]:
            bad.append("%s: lossy off the lossy link: %s" % (name, ctr))
if bad:
    print("FAIL:\n  " + "\n  ".join(bad))
    sys.exit(1)
print("ok: every pair across rxe1's 5% loss is ok and lossy with its retransmission counters; none other, none on the clean fabric")
PY
