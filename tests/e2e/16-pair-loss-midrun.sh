#!/usr/bin/env bash
# fabric: br0:0,1
# timeout: 120
# The link of the target goes 100% lossy in the middle of a timed pair run: the writer stops at its
# no-progress deadline (timed_out), the listener learns the same result over the side channel, and
# both exit 1 well before their own hard limits. Exactly timed_out: on the test bed's kernel rxe
# never completes a write with retry exceeded under total loss (see 11-loopback-loss100 and
# 03-faults), so the writer's no-progress deadline ends the run.
# --retest 0: this case is about the fault ending the run; a retest on the still-lossy link would
# only add its own timeout.
set -u
D=40 T=4   # a long run: the fault lands inside it however slow start-up and tc are under emulation
"$RP_BIN" pair --listen -p 18611 -d rxe1 --wait 30 --json "$RP_RESULTS/l.json" >"$RP_RESULTS/l.out" 2>&1 &
lpid=$!
sleep 1
( sleep 5; "$RP_FABRIC" fault loss rxe1 100% ) &
fpid=$!
t0=$(date +%s)
"$RP_BIN" pair 127.0.0.1:18611 -d rxe0 -s 4K -D $D --timeout $T --retest 0 --wait 30 --json "$RP_RESULTS/c.json" >"$RP_RESULTS/c.out" 2>&1
crc=$?
wait $lpid
lrc=$?
t1=$(date +%s)
wait $fpid
cat "$RP_RESULTS/c.out" "$RP_RESULTS/l.out"
[ "$crc" -eq 1 ] && [ "$lrc" -eq 1 ] || { echo "FAIL: client exit $crc, listener exit $lrc (both should be 1)"; exit 1; }
cs=$(jq -r '.pairs[0].status' "$RP_RESULTS/c.json")
ls=$(jq -r '.pairs[0].status' "$RP_RESULTS/l.json")
[ "$cs" = timed_out ] || { echo "FAIL: writer status $cs, want timed_out"; exit 1; }
[ "$cs" = "$ls" ] || { echo "FAIL: writer says $cs, listener says $ls"; exit 1; }
# bounded: it ends at the no-progress deadline after the fault, long before the 40 s run would
[ $((t1 - t0)) -lt $D ] || { echo "FAIL: took $((t1 - t0)) s, the fault did not end the run"; exit 1; }
echo "ok: both sides report $cs after $((t1 - t0)) s"
