#!/usr/bin/env bash
# fabric: br0:0,1
# timeout: 150
# A link that stops for 3 s in the middle of a pair, two ways:
# 1. 100% loss for 3 s (nothing passes, the port stays ACTIVE): the pair passes on its average, and
#    both sides carry the interval_drop warning with the slowest interval inside the outage. The
#    writer's --interval-drop travels to the listener in the hello. One write outstanding per
#    completion (-t 8 --cq-mod 1), so that the emulated link shows a completion several times per
#    --interval and the stall is one interval of its own. --qp-timeout 18 (1 s): rxe's 7 retries
#    then span the outage (with the probe's 67 ms they run out within it, and rxe leaves the QP
#    silent: timed_out, which the retest turns into flaky; seen on the test bed).
# 2. The link taken down for 3 s and up again (`fault down`, `fault up`): the port left ACTIVE, so
#    the first attempt is port_down (the PORT_ERR event, although the port is back), never a pass on
#    its average; the retest on the restored link is ok, so the pair is `flaky`: a warning with both
#    attempts, exit 0.
set -u
. "$RP_ROOT/scripts/testbed/e2e-lib.sh"
R=$RP_RESULTS
fail() { cat "$R"/*.out 2>/dev/null; e2e_fail "$*"; }
# run TAG PORT FAULT-SCRIPT WRITER-OPTIONS...: listener on rxe1, writer on rxe0, the fault script in
# the background from the writer's start; sets crc, lrc, tw and te (the writer's start and end, epoch
# seconds). fabric.sh itself can take seconds under emulation: the fault scripts note when each
# change is in effect, and the long runs (-D) keep the fault inside the measured run.
run() {
	local tag=$1 port=$2 fault=$3 lpid fpid
	shift 3
	"$RP_BIN" pair --listen -p "$port" -d rxe1 --wait 30 --json "$R/$tag-l.json" >"$R/$tag-l.out" 2>&1 &
	lpid=$!
	e2e_wait_listen "$port" 20 || fail "$tag: the listener did not listen"
	tw=$(date +%s.%N)
	bash -c "$fault" >"$R/$tag-fault.out" 2>&1 &
	fpid=$!
	"$RP_BIN" pair 127.0.0.1:"$port" -d rxe0 --wait 30 --json "$R/$tag-c.json" "$@" >"$R/$tag-c.out" 2>&1
	crc=$?
	te=$(date +%s.%N)
	wait $lpid
	lrc=$?
	wait $fpid
	cat "$R/$tag-c.out" "$R/$tag-l.out" "$R/$tag-fault.out"
}

F=$RP_FABRIC
run stall 18711 "sleep 2; $F fault loss rxe1 100%; date +%s.%N >$R/on; sleep 3; date +%s.%N >$R/off; $F fault clear rxe1; date +%s.%N >$R/clear" \
	-s 64K -t 8 --cq-mod 1 -D 16 --interval 0.5 --timeout 10 --qp-timeout 18 --interval-drop 0.25
e2e_note "stall: writer $crc, listener $lrc"
[ $crc -eq 0 ] && [ $lrc -eq 0 ] || fail "3 s of loss: writer exit $crc, listener exit $lrc (both 0)"
python3 - "$R/stall-c.json" "$R/stall-l.json" "$tw" "$(cat "$R/on")" "$(cat "$R/off")" "$(cat "$R/clear")" "$te" <<'PY' || fail "stall: reports"
import json, sys
tw, on, off, clear, te = (float(x) for x in sys.argv[3:8])
# the precondition: the link passed nothing for 3 s, and was clear again a while before the writer
# ended (its run lasts 16 s after a set-up of about a second)
assert clear < te - 2, "the fault outlasted the run (fabric.sh too slow?): clear %.1f s, end %.1f s" % (clear - tw, te - tw)
for f in sys.argv[1:3]:
    p = json.load(open(f))["pairs"][0]
    print(f.rsplit("/", 1)[1], p["status"], p["warnings"], "%.4f min %.5f at %.2f s" % (p["gbps"], p["gbps_min"], p["gbps_min_at_s"]))
    assert p["status"] == "ok" and p["verified"] and p["confirm"] is None, p
    # lossy may join: the outage costs a few retransmissions (one per 1 s ACK timeout, and the
    # writes in flight resent), a rate per GB that lands near the default 10/GB for this run
    assert set(p["warnings"]) - {"lossy"} == {"nominal_link_rate", "interval_drop"}, p["warnings"]
    assert p["gbps_min"] < 0.25 * p["gbps"], p
    # the slowest interval starts inside the outage: the run started after the writer did, and the
    # interval ends with the first completion after it (its start at most one --interval before it)
    assert 0 < p["gbps_min_at_s"] < clear - tw, (p["gbps_min_at_s"], clear - tw)
    assert len(p["attempts"]) == 1
print("ok: the loss window was %.1f..%.1f s after the writer started" % (on - tw, off - tw))
PY
grep -q "warning: interval_drop: the slowest interval ran at .* s into the run" "$R/stall-c.out" ||
	fail "stall: no interval_drop warning line from the writer"

# Both processes are held (SIGSTOP) from the moment the link goes down until it is ACTIVE again:
# the first attempt then always sees the flap (the PORT_ERR event waits on its async queue) and the
# retest always finds the link back, however the emulated CPUs schedule the port checks.
"$RP_BIN" pair --listen -p 18712 -d rxe1 --wait 30 --json "$R/flap-l.json" >"$R/flap-l.out" 2>&1 &
lpid=$!
e2e_wait_listen 18712 20 || fail "flap: the listener did not listen"
"$RP_BIN" pair 127.0.0.1:18712 -d rxe0 -s 64K -t 8 --cq-mod 1 -D 8 --timeout 10 --wait 30 \
	--json "$R/flap-c.json" >"$R/flap-c.out" 2>&1 &
wpid=$!
b0=$(e2e_tx_bytes h0)
for _ in $(seq 1 300); do   # mid-run: 2 MB of the pair out on the writer's link
	[ $(($(e2e_tx_bytes h0) - b0)) -gt 2000000 ] && break
	kill -0 $wpid 2>/dev/null || break
	sleep 0.1
done
kill -STOP $wpid $lpid || fail "flap: the pair ended before the fault"
"$F" fault down rxe1
for _ in $(seq 1 100); do [ "$(e2e_port_state rxe1)" = DOWN ] && break; sleep 0.1; done
[ "$(e2e_port_state rxe1)" = DOWN ] || fail "flap: rxe1 did not go DOWN"
sleep 3
"$F" fault up rxe1
for _ in $(seq 1 200); do [ "$(e2e_port_state rxe1)" = ACTIVE ] && break; sleep 0.1; done
[ "$(e2e_port_state rxe1)" = ACTIVE ] || fail "flap: rxe1 did not come back ACTIVE"
kill -CONT $lpid $wpid
wait $wpid
crc=$?
wait $lpid
lrc=$?
cat "$R/flap-c.out" "$R/flap-l.out"
e2e_note "flap: writer $crc, listener $lrc"
[ $crc -eq 0 ] && [ $lrc -eq 0 ] || fail "a 3 s flap: writer exit $crc, listener exit $lrc (both 0: flaky)"
python3 - "$R/flap-c.json" "$R/flap-l.json" <<'PY' || fail "flap: reports"
import json, sys
for f in sys.argv[1:3]:
    p = json.load(open(f))["pairs"][0]
    a = [(x["status"], x["qp_timeout"]) for x in p["attempts"]]
    print(f.rsplit("/", 1)[1], p["status"], p["confirm"], p["warnings"], a)
    assert p["status"] == "ok" and p["verified"] and p["confirm"] == "flaky", p
    # port_down is not a time-out: the retest keeps the probe ACK timeout
    assert a == [("port_down", 14), ("ok", 14)], a
    assert "went down during the pair" in p["attempts"][0]["reason"], p["attempts"][0]
    assert p["dst"]["device"] == "rxe1" and p["src"]["device"] == "rxe0", p
    assert "flaky" in p["warnings"], p["warnings"]
PY
grep -q '^rdmaprobe pair: flaky after 2 attempts' "$R/flap-c.out" || fail "flap: writer did not say flaky"
echo "ok: a 3 s stall is interval_drop, a 3 s flap is port_down then flaky"
