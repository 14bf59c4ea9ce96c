#!/usr/bin/env bash
# fabric: br0:0,1
# timeout: 180
# Retest before the verdict in pair mode: a pair below an absolute threshold (--min-bw 1000G, far
# above anything rxe moves) is measured again right away; the listener, in --once mode, serves the
# retest on the same connection. Both sides judge it with the writer's verdict, both report 2
# attempts and `confirmed`, both exit 1. With --retest 0 the same pair is one attempt, confirmed by
# rule. A healthy pair (no threshold) is one attempt, ok, exit 0 on both sides.
set -u
fail() { echo "FAIL: $*"; cat "$RP_RESULTS"/*.err 2>/dev/null; exit 1; }
run() {   # $1 tag, $2 TCP port, rest: writer options; sets crc, lrc
	local tag=$1 port=$2 lpid
	shift 2
	"$RP_BIN" pair --listen -p "$port" -d rxe1 --wait 60 --json "$RP_RESULTS/$tag-l.json" \
		>"$RP_RESULTS/$tag-l.out" 2>"$RP_RESULTS/$tag-l.err" &
	lpid=$!
	"$RP_BIN" pair 127.0.0.1:"$port" -d rxe0 -s 64K -n 100 --wait 60 --json "$RP_RESULTS/$tag-c.json" "$@" \
		>"$RP_RESULTS/$tag-c.out" 2>"$RP_RESULTS/$tag-c.err"
	crc=$?
	wait $lpid
	lrc=$?
	cat "$RP_RESULTS/$tag-c.out" "$RP_RESULTS/$tag-c.err" "$RP_RESULTS/$tag-l.out" "$RP_RESULTS/$tag-l.err"
}

run slow 18641 --min-bw 1000G
[ $crc -eq 1 ] && [ $lrc -eq 1 ] || fail "below threshold: writer $crc, listener $lrc (both 1)"
for side in c l; do
	f=$RP_RESULTS/slow-$side.err
	[ "$(grep -c '^rdmaprobe pair: attempt [12] of 2 (ACK timeout [0-9]*): below_threshold' "$f")" -eq 2 ] ||
		fail "slow-$side: not 2 below_threshold attempts"
	# a slow pair is retested with the probe's ACK timeout again: only time-outs and transport
	# errors get NCCL's longer one (lib/verdict/retest.c: a longer timeout only slows a lossy link down)
	grep -q '^rdmaprobe pair: attempt 1 of 2 (ACK timeout 14)' "$f" || fail "slow-$side: attempt 1 timeout"
	grep -q '^rdmaprobe pair: attempt 2 of 2 (ACK timeout 14)' "$f" || fail "slow-$side: attempt 2 timeout"
	grep -q '^rdmaprobe pair: confirmed after 2 attempts' "$f" || fail "slow-$side: not confirmed"
	[ "$(jq -r '.pairs[0].status' "$RP_RESULTS/slow-$side.json")" = below_threshold ] || fail "slow-$side.json status"
done
echo "ok: below threshold twice: confirmed on both sides, the listener served the retest in --once mode"

run once 18642 --min-bw 1000G --retest 0
[ $crc -eq 1 ] && [ $lrc -eq 1 ] || fail "--retest 0: writer $crc, listener $lrc (both 1)"
grep -q 'attempt 2' "$RP_RESULTS/once-c.err" "$RP_RESULTS/once-l.err" && fail "--retest 0 measured twice"
echo "ok: --retest 0: one attempt"

run good 18643 --min-bw 0
[ $crc -eq 0 ] && [ $lrc -eq 0 ] || fail "healthy: writer $crc, listener $lrc (both 0)"
grep -q 'attempt' "$RP_RESULTS/good-c.err" "$RP_RESULTS/good-l.err" && fail "a healthy pair was retested"
echo "ok: a healthy pair is measured once"
