#!/usr/bin/env bash
# fabric: br0:0,1
# timeout: 240
# The pair listener is a trust boundary. 1) `pair --listen --serve` with a token and an allow-list:
# hostile clients (silence, garbage, a huge frame length, a frame that never completes, a hello of
# another version, the shorter hello of an older release (told "another version", not dropped as
# garbage), a wrong token, an rdmaprobe writer with the wrong token) are each dropped within
# --timeout with one log line, and a real writer queued behind them is served and passes; SIGTERM
# then ends the listener with 143 and its JSON holds the served pair. 2) `--once` (the default)
# keeps waiting past a silent client and exits 0 after serving one real writer. 3) SIGINT to a
# listener in the middle of a pair: exit 130, its JSON names the pair `interrupted`.
set -u
export RDMAPROBE_TOKEN=e2e-token-0123
fail() { echo "FAIL: $*"; cat "$RP_RESULTS"/*.out "$RP_RESULTS"/*.err 2>/dev/null; exit 1; }

# --- 1. --serve against hostile clients -----------------------------------------------------------
P=18631
"$RP_BIN" pair --listen --serve -p $P -d rxe1 --allow 10.0.0.0/8,127.0.0.0/8 --timeout 2 \
	--json "$RP_RESULTS/serve.json" >"$RP_RESULTS/serve.out" 2>"$RP_RESULTS/serve.err" &
lpid=$!
sleep 1
# the hostile clients connect first, in this order, and each checks that the listener closed it
python3 - $P "$RP_RESULTS/hostile.ready" >"$RP_RESULTS/hostile.out" 2>&1 <<'PY' &
import socket, struct, sys
port = int(sys.argv[1])
def conn():
    s = socket.create_connection(("127.0.0.1", port))
    s.settimeout(60)   # a hang guard only: the listener must close us long before
    return s
def hello(version=2, token=b"e2e-token-0123"):
    # struct rp_sw_msg (lib/session/session_wire.h, version 2): magic, version, type HELLO, length 112, reserved,
    # retest, min_bw_absolute, min_bw, outlier, interval_drop, token[64]
    body = struct.pack("<IHHII IIddd64s", 0x5250484c, version, 1, 112, 0, 1, 0, 0.0, 0.0, 0.1, token)
    return struct.pack("!I", len(body)) + body
def hello_v1(token=b"e2e-token-0123"):
    # an older release: version 1, 104 bytes (no interval_drop)
    body = struct.pack("<IHHII IIdd64s", 0x5250484c, 1, 1, 104, 0, 1, 0, 0.0, 0.0, token)
    return struct.pack("!I", len(body)) + body
clients = {
    "silent": (conn(), b""),
    "garbage": (conn(), b"GET / HTTP/1.1\r\nHost: x\r\n\r\n"),
    "huge length": (conn(), struct.pack("!I", 0xFFFFFFF0) + b"x" * 64),
    "never completes": (conn(), struct.pack("!I", 8000) + b"y" * 100),
    "other version": (conn(), hello(version=99)),
    "older release": (conn(), hello_v1()),
    "wrong token": (conn(), hello(token=b"not-the-token")),
}
for name, (s, data) in clients.items():
    if data:
        s.sendall(data)
open(sys.argv[2], "w").close()   # all queued: the writers may come now
bad = 0
for name, (s, _) in clients.items():
    got = b""
    try:
        while True:
            chunk = s.recv(4096)
            if not chunk:
                break
            got += chunk
        print(f"ok: {name}: closed by the listener ({len(got)} bytes of answer)")
    except (ConnectionResetError, socket.timeout) as e:
        if isinstance(e, socket.timeout):
            print(f"FAIL: {name}: still open"); bad = 1
        else:
            print(f"ok: {name}: reset by the listener")
    # the refusals that deserve an answer get one: an ACK (type 2) with the reason
    if name in ("other version", "older release", "wrong token"):
        ok = len(got) >= 4 + 24 and struct.unpack("<IHHIII", got[4:24])[2] == 2
        verdict = struct.unpack("<I", got[20:24])[0] if ok else None
        want = 1 if name == "wrong token" else 2
        if verdict != want:
            print(f"FAIL: {name}: answer verdict {verdict}, wanted {want}"); bad = 1
sys.exit(bad)
PY
hpid=$!
wait_for() { for _ in $(seq 300); do [ -e "$1" ] && return 0; sleep 0.1; done; fail "$1 never appeared"; }
wait_for "$RP_RESULTS/hostile.ready"
# an rdmaprobe writer with the wrong token: refused, told why, exit 2
RDMAPROBE_TOKEN=wrong-token-99 "$RP_BIN" pair 127.0.0.1:$P -d rxe0 -s 4K -n 10 --min-bw 0 --wait 60 \
	>"$RP_RESULTS/wrong.out" 2>"$RP_RESULTS/wrong.err"
wrc=$?
# the real writer, behind all of them
# (the token on its command line this time: it must not end up in its JSON's command line)
"$RP_BIN" pair 127.0.0.1:$P -d rxe0 -s 64K -n 100 --min-bw 0 --wait 60 --token e2e-token-0123 \
	--json "$RP_RESULTS/writer.json" >"$RP_RESULTS/writer.out" 2>"$RP_RESULTS/writer.err"
crc=$?
wait $hpid
hrc=$?
cat "$RP_RESULTS/hostile.out"
kill -TERM $lpid
wait $lpid
lrc=$?
cat "$RP_RESULTS/serve.err" "$RP_RESULTS/wrong.err"
[ $wrc -eq 2 ] && grep -q "wrong token" "$RP_RESULTS/wrong.err" || fail "wrong-token writer: exit $wrc"
[ $hrc -eq 0 ] || fail "a hostile client was not dropped"
[ $crc -eq 0 ] || fail "the real writer: exit $crc"
[ $lrc -eq 143 ] || fail "listener after SIGTERM: exit $lrc, wanted 143"
# one log line per refused client (7 raw ones and the wrong-token writer), and never the token
n=$(grep -cE "pair listener: (dropped|refused) 127\.0\.0\.1:[0-9]+: " "$RP_RESULTS/serve.err")
[ "$n" -eq 8 ] || fail "$n refusal lines, wanted 8"
grep -q "refused 127.0.0.1:[0-9]*: protocol version 1, this side speaks 2" "$RP_RESULTS/serve.err" ||
	fail "the older release was not told its version"
grep -q "e2e-token-0123\|wrong-token-99\|not-the-token" "$RP_RESULTS/serve.err" && fail "a token was logged"
grep -q "e2e-token-0123" "$RP_RESULTS/writer.json" "$RP_RESULTS/writer.err" && fail "the token is in the writer's report"
jq -e '.command_line | test("--token [*]+ ")' "$RP_RESULTS/writer.json" >/dev/null || fail "command line not blanked"
for f in serve writer; do
	[ "$(jq -r '[(.pairs|length), .pairs[0].status, .pairs[0].verified] | map(tostring) | join(" ")' \
		"$RP_RESULTS/$f.json")" = "1 ok true" ] || fail "$f.json: $(jq -c '.pairs' "$RP_RESULTS/$f.json")"
done
echo "ok: 8 hostile clients dropped, the real writer served and verified, listener stopped with 143"

# --- 2. --once: past a silent client, one real writer, exit 0 ----------------------------------------
P=18632
"$RP_BIN" pair --listen -p $P -d rxe1 --timeout 2 --wait 60 --json "$RP_RESULTS/once.json" \
	>"$RP_RESULTS/once.out" 2>"$RP_RESULTS/once.err" &
lpid=$!
sleep 1
python3 -c "import socket,time; s=socket.create_connection(('127.0.0.1',$P)); open('$RP_RESULTS/silent.ready','w').close(); time.sleep(8)" &
spid=$!
wait_for "$RP_RESULTS/silent.ready"
"$RP_BIN" pair 127.0.0.1:$P -d rxe0 -s 64K -n 100 --min-bw 0 --wait 60 >"$RP_RESULTS/once-w.out" 2>&1
crc=$?
wait $lpid
lrc=$?
wait $spid
[ $crc -eq 0 ] && [ $lrc -eq 0 ] || fail "--once: writer $crc, listener $lrc"
grep -q "no valid hello within 2.0 s" "$RP_RESULTS/once.err" || fail "--once: the silent client was not dropped"
[ "$(jq -r '.pairs[0].status' "$RP_RESULTS/once.json")" = ok ] || fail "--once: pair not ok"
echo "ok: --once served the writer behind a silent client and exited 0"

# --- 3. SIGINT to the listener mid-pair -------------------------------------------------------------
P=18633
"$RP_BIN" pair --listen -p $P -d rxe1 --timeout 2 --wait 60 --json "$RP_RESULTS/int.json" \
	>"$RP_RESULTS/int.out" 2>"$RP_RESULTS/int.err" &
lpid=$!
sleep 1
"$RP_BIN" pair 127.0.0.1:$P -d rxe0 -s 4K -D 20 --timeout 2 --retest 0 --min-bw 0 --wait 60 \
	>"$RP_RESULTS/int-w.out" 2>&1 &
wpid=$!
sleep 6   # the run is under way
kill -INT $lpid
wait $lpid
lrc=$?
wait $wpid
[ $lrc -eq 130 ] || fail "listener after SIGINT: exit $lrc, wanted 130"
[ "$(jq -r '.pairs[0].status' "$RP_RESULTS/int.json")" = interrupted ] ||
	fail "SIGINT: $(jq -c '.pairs[0] | {status, reason}' "$RP_RESULTS/int.json")"
echo "ok: SIGINT mid-pair: listener exit 130, the pair is interrupted in its JSON"
