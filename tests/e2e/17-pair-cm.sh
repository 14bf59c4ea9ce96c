#!/usr/bin/env bash
# fabric: br0:0,1 br1:2
# timeout: 120
# pair --cm: librdmacm resolves the address and route and connects the QPs (like perftest -R).
# rxe0 -> rxe1 (one bridge) is ok and verified on both sides; rxe0 -> rxe2 (another bridge) fails at
# address resolution (resolve_failed), on both sides, within the deadline: rdma_cm's ARP for rxe2's
# address gets no answer across the bridges, so RDMA_CM_EVENT_ADDR_ERROR comes before any route or
# connection step (deterministic: there is no path on which a later step could fail first).
set -u
pair() {   # $1 tag, $2 listener device, $3 TCP port, rest: client args
	local tag=$1 dev=$2 port=$3 lpid
	shift 3
	"$RP_BIN" pair --listen -p "$port" -d "$dev" --wait 30 --json "$RP_RESULTS/$tag-l.json" >"$RP_RESULTS/$tag-l.out" 2>&1 &
	lpid=$!
	"$RP_BIN" pair 127.0.0.1:"$port" -d rxe0 --cm --wait 30 --json "$RP_RESULTS/$tag-c.json" "$@" >"$RP_RESULTS/$tag-c.out" 2>&1
	crc=$?
	wait $lpid
	lrc=$?
	cat "$RP_RESULTS/$tag-c.out" "$RP_RESULTS/$tag-l.out"
}
pair ok rxe1 18621 -s 64K -n 100 -q 2 --min-bw 0
[ "$crc" -eq 0 ] && [ "$lrc" -eq 0 ] || { echo "FAIL: reachable pair: client $crc, listener $lrc"; exit 1; }
for f in ok-c ok-l; do
	[ "$(jq -r '.pairs[0].status + " " + (.pairs[0].verified|tostring)' "$RP_RESULTS/$f.json")" = "ok true" ] ||
		{ echo "FAIL: $f not ok and verified"; exit 1; }
done
t0=$(date +%s)
pair unr rxe2 18622 -s 4K -n 10 --timeout 5 --retest 0   # one attempt: the bound below is for one
t1=$(date +%s)
[ "$crc" -eq 1 ] && [ "$lrc" -eq 1 ] || { echo "FAIL: unreachable pair: client $crc, listener $lrc"; exit 1; }
cs=$(jq -r '.pairs[0].status' "$RP_RESULTS/unr-c.json")
ls=$(jq -r '.pairs[0].status' "$RP_RESULTS/unr-l.json")
[ "$cs" = resolve_failed ] || { echo "FAIL: client status $cs, want resolve_failed"; exit 1; }
[ "$cs" = "$ls" ] || { echo "FAIL: client says $cs, listener $ls"; exit 1; }
[ $((t1 - t0)) -le 25 ] || { echo "FAIL: took $((t1 - t0)) s"; exit 1; }
echo "ok: --cm pair verified; unreachable pair classified $cs on both sides in $((t1 - t0)) s"
