#!/usr/bin/env bash
# fabric: br0:0,1
# timeout: 150
# 1. Ctrl-C of a pair writer mid-run (SIGINT to its process group, as a terminal sends it), against
#    a `--serve` listener that has already served one finished pair: the writer exits 130 and its
#    --json is valid and says `interrupted` (never ok); the listener goes on serving, and on its own
#    SIGINT (while idle) exits 130 with a valid file that holds the finished pairs (ok) and the
#    interrupted one: peer_lost and unconfirmed (the writer's stop also cuts its RESULT message, so
#    the listener sees the side channel close mid-run; never ok, never confirmed).
# 2. The target's port goes DOWN mid-pair and stays down: the first attempt is port_down (found at
#    the next port check, well before the run's end); the retest finds the port not ACTIVE
#    (no_usable_port, the deciding attempt); confirmed, exit 1 on both sides, and both reports still
#    name the pair rxe0 -> rxe1.
set -u
. "$RP_ROOT/scripts/testbed/e2e-lib.sh"
R=$RP_RESULTS
fail() { tail -n 30 "$R"/*.out 2>/dev/null; e2e_fail "$*"; }

setsid "$RP_BIN" pair --listen --serve -p 18721 -d rxe1 --timeout 5 --json "$R/serve.json" >"$R/serve.out" 2>&1 &
spid=$!
e2e_wait_listen 18721 20 || fail "the listener did not listen"
"$RP_BIN" pair 127.0.0.1:18721 -d rxe0 -s 4K -n 200 --json "$R/w1.json" >"$R/w1.out" 2>&1 || fail "first writer: exit $?"
setsid "$RP_BIN" pair 127.0.0.1:18721 -d rxe0 -s 64K -t 8 --cq-mod 1 -D 60 --timeout 5 --json "$R/w2.json" \
	>"$R/w2.out" 2>&1 &
wpid=$!
# mid-run: at least 2 MB of the second pair went out on the writer's link
b0=$(e2e_tx_bytes h0)
for _ in $(seq 1 300); do
	[ $(($(e2e_tx_bytes h0) - b0)) -gt 2000000 ] && break
	kill -0 $wpid 2>/dev/null || break
	sleep 0.1
done
kill -INT -- "-$wpid" || fail "the second writer ended before the signal"
wait $wpid
wrc=$?
e2e_note "writer after SIGINT: exit $wrc"
[ $wrc -eq 130 ] || fail "interrupted writer: exit $wrc, want 130"
# the listener answers the next writer: it is still serving
"$RP_BIN" pair 127.0.0.1:18721 -d rxe0 -s 4K -n 100 --json "$R/w3.json" >"$R/w3.out" 2>&1 || fail "third writer: exit $?"
e2e_note "third writer done"
kill -INT -- "-$spid"
wait $spid
src=$?
cat "$R/w2.out" "$R/serve.out"
e2e_note "listener after SIGINT: exit $src"
[ $src -eq 130 ] || fail "listener after SIGINT: exit $src, want 130"
python3 - "$R/w2.json" "$R/serve.json" <<'PY' || fail "interrupt: reports"
import json, sys
w = json.load(open(sys.argv[1]))["pairs"]
assert len(w) == 1 and w[0]["status"] == "interrupted" and w[0]["confirm"] == "unconfirmed", w
print("writer:", w[0]["status"], w[0]["reason"])
s = json.load(open(sys.argv[2]))["pairs"]
print("listener:", [(p["status"], p["msg_size"], p["reason"]) for p in s])
assert len(s) == 3, len(s)
assert s[0]["status"] == "ok" and s[0]["verified"] and s[0]["msg_size"] == 4096, s[0]
assert s[1]["status"] == "peer_lost" and s[1]["confirm"] == "unconfirmed", s[1]
assert s[2]["status"] == "ok" and s[2]["verified"], s[2]
PY

"$RP_BIN" pair --listen -p 18722 -d rxe1 --wait 30 --json "$R/down-l.json" >"$R/down-l.out" 2>&1 &
lpid=$!
e2e_wait_listen 18722 20 || fail "the listener did not listen"
"$RP_FABRIC" fault down rxe1 after 3
"$RP_BIN" pair 127.0.0.1:18722 -d rxe0 -s 64K -t 8 --cq-mod 1 -D 20 --timeout 4 --wait 30 --json "$R/down-c.json" \
	>"$R/down-c.out" 2>&1
crc=$?
wait $lpid
lrc=$?
cat "$R/down-c.out" "$R/down-l.out"
e2e_note "port down: writer $crc, listener $lrc"
[ $crc -eq 1 ] && [ $lrc -eq 1 ] || fail "port down: writer exit $crc, listener exit $lrc (both 1)"
python3 - "$R/down-c.json" "$R/down-l.json" <<'PY' || fail "port down: reports"
import json, sys
for f in sys.argv[1:3]:
    p = json.load(open(f))["pairs"][0]
    a = [x["status"] for x in p["attempts"]]
    print(f.rsplit("/", 1)[1], p["status"], p["confirm"], a, p["reason"])
    assert a == ["port_down", "no_usable_port"], a
    # the PORT_ERR event or the port query, whichever check comes first after the fault: both are
    # port_down, with the reason naming the target port
    assert "rxe1 port 1 went down during the pair" in p["attempts"][0]["reason"] or \
        "rxe1 port 1 left ACTIVE" in p["attempts"][0]["reason"], p["attempts"][0]
    assert p["status"] == "no_usable_port" and p["confirm"] == "confirmed", p
    assert p["src"]["device"] == "rxe0" and p["dst"]["device"] == "rxe1", (p["src"], p["dst"])
PY
echo "ok: SIGINT of a writer and a port that stays down"
