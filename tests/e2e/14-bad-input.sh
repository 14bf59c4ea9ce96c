#!/usr/bin/env bash
# fabric: br0:0,1
# timeout: 60
# Bad input exits 2 with a message naming the problem, also with real devices present.
set -u
fail=0
expect2() {   # $1: message fragment, rest: arguments
	local want=$1 out rc
	shift
	out=$("$RP_BIN" "$@" 2>&1 >/dev/null)
	rc=$?
	if [ "$rc" -ne 2 ] || ! grep -qF -- "$want" <<<"$out"; then
		echo "FAIL: rdmaprobe $*: exit $rc, stderr: $out (wanted 2 and '$want')"
		fail=1
	else
		echo "ok: rdmaprobe $* -> 2: $out"
	fi
}
expect2 "selects no active port (adapters here: rxe0, rxe1)" loopback -d nosuch0
expect2 "selects no active port" loopback -d =rxe
expect2 "selects no active port" pair --listen -d rxe0 -i 2
# an entry longer than NCCL's name buffer is cut as NCCL cuts it (lib/nccl/nccl_rules.c), not refused:
# the cut name matches no adapter here
expect2 "selects no active port" loopback -d "$(printf 'x%.0s' $(seq 1 80))"
expect2 "must be below 4 GiB" loopback -s 4G
expect2 "--size 0: out of range" loopback -s 0
expect2 "--iters 1x: not a valid number" loopback -n 1x
expect2 "--timeout abc: not a valid duration" loopback --timeout abc
expect2 "the port must be a number" pair 127.0.0.1:0
expect2 "--no-self with 1 port leaves no pair" loopback -d rxe0 --no-self
exit $fail
