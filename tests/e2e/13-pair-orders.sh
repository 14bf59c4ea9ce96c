#!/usr/bin/env bash
# fabric: br0:0,1
# timeout: 120
# pair mode between two processes over the TCP side channel, in both start orders: the client
# retries until the listener is up. Both sides report ok and verified, with the same endpoints.
# --min-bw 0: rxe's link rate is nominal, a fraction of it means nothing (as in the matrix cases).
set -u
run_pair() {   # $1: which starts first (listen|client), $2: TCP port
	local first=$1 port=$2 lpid crc lrc
	if [ "$first" = listen ]; then
		"$RP_BIN" pair --listen -p "$port" -d rxe1 --wait 30 --json "$RP_RESULTS/l-$first.json" >"$RP_RESULTS/l-$first.out" 2>&1 &
		lpid=$!
		sleep 1
		"$RP_BIN" pair 127.0.0.1:"$port" -d rxe0 -s 64K -n 100 --min-bw 0 --wait 30 --json "$RP_RESULTS/c-$first.json" >"$RP_RESULTS/c-$first.out" 2>&1
		crc=$?
	else
		"$RP_BIN" pair 127.0.0.1:"$port" -d rxe0 -s 64K -n 100 --min-bw 0 --wait 30 --json "$RP_RESULTS/c-$first.json" >"$RP_RESULTS/c-$first.out" 2>&1 &
		lpid=$!
		sleep 2   # the client is retrying now
		"$RP_BIN" pair --listen -p "$port" -d rxe1 --wait 30 --json "$RP_RESULTS/l-$first.json" >"$RP_RESULTS/l-$first.out" 2>&1
		lrc=$?
		wait $lpid
		crc=$?
		lpid=
	fi
	[ -n "$lpid" ] && { wait $lpid; lrc=$?; }
	cat "$RP_RESULTS/c-$first.out" "$RP_RESULTS/l-$first.out"
	[ "$crc" -eq 0 ] && [ "$lrc" -eq 0 ] || { echo "FAIL ($first first): client exit $crc, listener exit $lrc"; return 1; }
	python3 - "$RP_RESULTS/c-$first.json" "$RP_RESULTS/l-$first.json" <<'PY' || return 1
import json, sys
c = json.load(open(sys.argv[1]))["pairs"][0]
l = json.load(open(sys.argv[2]))["pairs"][0]
for p in (c, l):
    assert p["status"] == "ok" and p["verified"], p
    assert p["src"]["device"] == "rxe0" and p["dst"]["device"] == "rxe1", p
    assert p["msg_size"] == 65536 and p["bytes"] == 100 * 65536, p
assert c["gbps"] == l["gbps"] > 0
print("ok: both sides agree, verified")
PY
}
run_pair listen 18601 || exit 1
run_pair client 18602 || exit 1
