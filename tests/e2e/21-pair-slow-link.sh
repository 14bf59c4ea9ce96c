#!/usr/bin/env bash
# fabric: br0:0,1
# timeout: 200
# A slow but healthy link (netem rate limit, nothing lost) whose pair run takes more than 2x the
# listener's old flat cap (30 x --timeout = 15 s): the writer's progress reports keep the listener's
# deadline sliding, and both sides end ok and verified, never timed_out or a transport error.
# (Before: the listener timed out at 15 s, tore its QP down, and the writer reported retry_exceeded.)
set -u
LT=0.5          # the listener's --timeout: its old cap was 30 x 0.5 = 15 s
OLD_CAP=15
"$RP_FABRIC" fault rate rxe1 8mbit
"$RP_BIN" pair --listen -p 18619 -d rxe1 --timeout $LT --wait 30 --json "$RP_RESULTS/l.json" >"$RP_RESULTS/l.out" 2>&1 &
lpid=$!
sleep 1
# 64 KiB at 8 Mb/s is about 70 ms a write; one outstanding (-t 1) so the transport never queues more
# than one write ahead (and the ACK timeout, 1 s at --qp-timeout 18, is never reached by queueing)
"$RP_BIN" pair 127.0.0.1:18619 -d rxe0 -s 64K -n 520 -t 1 --qp-timeout 18 --timeout 10 --wait 30 \
	--json "$RP_RESULTS/c.json" >"$RP_RESULTS/c.out" 2>&1
crc=$?
wait $lpid
lrc=$?
"$RP_FABRIC" fault clear rxe1
cat "$RP_RESULTS/c.out" "$RP_RESULTS/l.out"
[ "$crc" -eq 0 ] && [ "$lrc" -eq 0 ] || { echo "FAIL: client exit $crc, listener exit $lrc (both should be 0)"; exit 1; }
for side in c l; do
	st=$(jq -r '.pairs[0].status' "$RP_RESULTS/$side.json")
	ver=$(jq -r '.pairs[0].verified' "$RP_RESULTS/$side.json")
	[ "$st" = ok ] && [ "$ver" = true ] || { echo "FAIL: $side status $st verified $ver"; exit 1; }
done
# the precondition of the proof: the run really outlasted 2x the old cap (520 writes of 64 KiB at
# 8 Mb/s: about 35 s)
el=$(jq -r '.pairs[0].elapsed_s' "$RP_RESULTS/l.json")
awk -v e="$el" -v c=$OLD_CAP 'BEGIN { exit !(e > 2 * c) }' ||
	{ echo "FAIL: the run took $el s, not more than 2 x $OLD_CAP s: the link was not slow enough to prove anything"; exit 1; }
echo "ok: a slow link ($el s, the old cap was $OLD_CAP s) ends ok on both sides"
