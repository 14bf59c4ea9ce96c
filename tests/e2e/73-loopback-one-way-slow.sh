#!/usr/bin/env bash
# fabric: br0:0,1,2
# timeout: 300
# Issue 26 item 7: a direction at a small fraction of its reverse on the same link is at least
# below_threshold, also on soft devices without --min-bw. rxe1's netdev is rate-limited on its own
# egress only (2 Mbit/s, a deep queue: slow, not lossy), so rxe1 -> rxe0 writes crawl while rxe0 ->
# rxe1 (whose ACKs are the only traffic out of rxe1) runs at full speed. loopback -d =rxe0,rxe1
# --no-self: the slow direction fails as below_threshold naming the reverse, the fast one is ok,
# exit 1. Before the fix this was PASS (the issue: 0.003 Gb/s one way, 0.224 the other).
set -u
nd=$(cat /sys/class/infiniband/rxe1/ports/1/gid_attrs/ndevs/0 2>/dev/null)
[ -n "$nd" ] || { echo "FAIL: no netdev for rxe1"; exit 1; }
tc qdisc replace dev "$nd" root netem rate 2mbit limit 100000 || { echo "FAIL: tc on $nd"; exit 1; }
"$RP_BIN" loopback -d =rxe0,rxe1 --no-self -s 4K -n 100 --timeout 20 --retest 0 --json "$RP_RESULTS/lb.json" \
	>"$RP_RESULTS/stdout" 2>"$RP_RESULTS/stderr"
rc=$?
tc qdisc del dev "$nd" root 2>/dev/null
cat "$RP_RESULTS/stdout"
[ "$rc" -eq 1 ] || { tail -20 "$RP_RESULTS/stderr"; echo "FAIL: exit $rc, expected 1"; exit 1; }
python3 - "$RP_RESULTS/lb.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
by = {(p["src"]["device"], p["dst"]["device"]): p for p in r["pairs"]}
slow, fast = by[("rxe1", "rxe0")], by[("rxe0", "rxe1")]
print("rxe1->rxe0 %s %.4f Gb/s: %s" % (slow["status"], slow["gbps"], slow["reason"]))
print("rxe0->rxe1 %s %.4f Gb/s" % (fast["status"], fast["gbps"]))
assert fast["status"] == "ok", fast["status"]
assert slow["gbps"] < 0.1 * fast["gbps"], "the rate limit did not make rxe1->rxe0 a tenth of its reverse"
assert slow["status"] == "below_threshold", slow["status"]
assert "reverse direction of the same link (rxe0:1 -> rxe1:1" in slow["reason"], slow["reason"]
print("ok: the slow direction is below_threshold against its reverse")
PY
