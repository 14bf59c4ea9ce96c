#!/usr/bin/env bash
# fabric: br0:0,1
# timeout: 240
# --bidir on two rxe devices: rxe0 -> rxe1 and rxe1 -> rxe0 at once, each direction verified and
# reported on its own (text, JSON, CSV), the sum beside them. One direction is made lossy: 5% netem
# loss on the egress of rxe1's veth (h1) only, with tc here because fabric.sh's faults act on both
# directions of a link (and the guest has netem but no classful qdisc to pick packets by size). That
# egress carries rxe1 -> rxe0's data and rxe0 -> rxe1's ACKs: with 64 KiB writes (16 packets each)
# 56% of the reverse's writes lose a packet and wait for a retransmission, while a lost ACK of the
# forward is mostly covered by the next (cumulative). The two directions must come out different
# (reverse below half the forward), both verified. (A first run with 4 KiB writes, one packet each,
# hit both directions alike: 0.047 against 0.027 Gb/s.) Thresholds are off (--min-bw 0 --outlier 0):
# this case proves what is measured and reported; the per-direction verdict rule is proved by the
# unit tests (test_verdict.c, test_bidir_each_direction_judged).
set -u
BIN=${RP_BIN:?RP_BIN not set}
fail() { echo "FAIL: $*"; tc qdisc del dev h1 root 2>/dev/null; exit 1; }

tc qdisc replace dev h1 root netem loss 5% || fail "tc netem on h1"
"$BIN" loopback -d rxe0,rxe1 --no-self --bidir -s 64K -D 3 --timeout 10 --min-bw 0 --outlier 0 --retest 0 \
	--json "$RP_RESULTS/bidir.json" --csv "$RP_RESULTS/bidir.csv" >"$RP_RESULTS/stdout" 2>"$RP_RESULTS/stderr"
rc=$?
tc -s qdisc show dev h1
tc qdisc del dev h1 root 2>/dev/null
cat "$RP_RESULTS/stdout"
[ "$rc" -eq 0 ] || { tail -20 "$RP_RESULTS/stderr"; fail "loopback --bidir exited $rc, expected 0"; }
grep -q '^\[1/1\] rxe0:1 -> rxe1:1' "$RP_RESULTS/stderr" || fail "not one unordered pair rxe0:1 -> rxe1:1"
head -1 "$RP_RESULTS/bidir.csv" | grep -q ',bidir,forward_status,rev_status,rev_gbps,' || fail "CSV header without the reverse"
sed -n 2p "$RP_RESULTS/bidir.csv" | grep -q ',true,ok,ok,' || fail "CSV row: not bidir with both directions ok"
python3 - "$RP_RESULTS/bidir.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
ps = r["pairs"]
if len(ps) != 1:
    print("FAIL: %d pairs, expected one bidir pair" % len(ps)); sys.exit(1)
p = ps[0]
rv = p.get("reverse")
print("forward %s->%s %s %.4f Gb/s verified %s; reverse %s %.4f Gb/s verified %s; sum %.4f" % (
    p["src"]["device"], p["dst"]["device"], p["status"], p["gbps"], p["verified"],
    rv and rv["status"], rv and rv["gbps"], rv and rv["verified"], p.get("gbps_sum", 0)))
bad = []
if not p.get("bidir") or rv is None:
    bad.append("no reverse direction in the JSON")
else:
    if (p["src"]["device"], p["dst"]["device"]) != ("rxe0", "rxe1"):
        bad.append("forward is not rxe0 -> rxe1")
    if p["status"] != "ok" or p["forward_status"] != "ok" or rv["status"] != "ok":
        bad.append("status %s forward %s reverse %s" % (p["status"], p["forward_status"], rv["status"]))
    if not (p["verified"] and rv["verified"]):
        bad.append("not both directions verified")
    if not (p["gbps"] > 0 and rv["gbps"] > 0 and rv["iters"] > 0):
        bad.append("a direction moved nothing")
    if abs(p["gbps_sum"] - p["gbps"] - rv["gbps"]) > 1e-3:
        bad.append("gbps_sum is not the sum")
    if not rv["gbps"] < 0.5 * p["gbps"]:
        bad.append("the lossy direction (rxe1 -> rxe0, %.4f) is not below half the clean one (%.4f)" % (rv["gbps"], p["gbps"]))
if bad:
    print("FAIL:\n  " + "\n  ".join(bad)); sys.exit(1)
print("ok: both directions verified and reported; the lossy one is slower")
PY
[ $? -eq 0 ] || exit 1
# the text matrix: row rxe1:1 column rxe0:1 is the reverse direction's rate, row rxe0:1 column rxe1:1 the forward's
awk '$1 == "rxe1:1" && $2 ~ /^[0-9.]+$/ { r = 1 } $1 == "rxe0:1" && $3 ~ /^[0-9.]+$/ { f = 1 } END { exit !(r && f) }' \
	"$RP_RESULTS/stdout" || fail "the text matrix does not show both directions' rates"
echo "ok: loopback --bidir"
