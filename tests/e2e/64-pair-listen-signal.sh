#!/usr/bin/env bash
# fabric: br0:0
# timeout: 150
# Issue 26 item 16: a `pair --listen` waiting for a client ends on SIGINT within one --timeout,
# exit 130, its JSON saying interrupted: idle, and with a client connected that never says hello
# (a port scanner, a stuck writer). Before, it wrote its JSON at the SIGINT and was still running
# 60 s later. The bound below is a deadline for "it ended at all", far above --timeout 2.
set -u
r=$RP_RESULTS

# listen_then_int PORT NAME [client]: start a listener, optionally hold a silent TCP client on it,
# send SIGINT, give it 30 s to end. Prints the exit status.
listen_then_int() {
	local port=$1 name=$2 client=${3:-} pid rc t0
	setsid "$RP_BIN" pair --listen -p "$port" -d rxe0 --wait 120 --timeout 2 --json "$r/$name.json" \
		>"$r/$name.out" 2>"$r/$name.err" &
	pid=$!
	for _ in $(seq 1 100); do grep -q "waiting for" "$r/$name.err" 2>/dev/null && break; sleep 0.2; done
	if [ -n "$client" ]; then
		exec 3<>"/dev/tcp/127.0.0.1/$port" || { echo "FAIL: could not connect a silent client"; return 1; }
		sleep 1
	fi
	t0=$(date +%s)
	kill -INT -- "-$pid"
	for _ in $(seq 1 150); do kill -0 "$pid" 2>/dev/null || break; sleep 0.2; done
	if kill -0 "$pid" 2>/dev/null; then
		echo "FAIL ($name): the listener still runs 30 s after SIGINT"
		kill -9 -- "-$pid"
		[ -n "$client" ] && exec 3>&-
		return 1
	fi
	wait "$pid"
	rc=$?
	[ -n "$client" ] && exec 3>&-
	echo "$name: exit $rc, $(( $(date +%s) - t0 )) s after SIGINT"
	cat "$r/$name.err"
	[ "$rc" -eq 130 ] || { echo "FAIL ($name): exit $rc, want 130"; return 1; }
	python3 - "$r/$name.json" <<'PY' || return 1
import json, sys
d = json.load(open(sys.argv[1]))
assert len(d["pairs"]) == 1 and d["pairs"][0]["status"] == "interrupted", d["pairs"]
PY
}

listen_then_int 18601 idle || exit 1
listen_then_int 18602 silent-client client || exit 1
echo "PASS"
