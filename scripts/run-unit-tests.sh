#!/usr/bin/env bash
# run-unit-tests.sh JOBS RDMAPROBE TEST...: every cmocka test program, JOBS at a time (the tests are
# independent: each its own temporary files, ephemeral ports, stand-ins), each one's output kept
# apart and shown whole, in the order given, under its "== TEST" line, with its exit status when it
# failed. Exit 0 when every one passed, 1 otherwise. RP_TEST_BIN=RDMAPROBE for the tests that run
# the program.
set -u
jobs=${1:?JOBS}
bin=${2:?RDMAPROBE}
shift 2
out=$(mktemp -d "${TMPDIR:-/tmp}/rp-unit.XXXXXX") || exit 1
trap 'rm -rf "$out"' EXIT
[ "$jobs" -ge 1 ] 2>/dev/null || jobs=1
n=0
running=0
for t in "$@"; do
	n=$((n + 1))
	(RP_TEST_BIN=$bin "$t" >"$out/$n.log" 2>&1; echo $? >"$out/$n.rc") &
	running=$((running + 1))
	if [ "$running" -ge "$jobs" ]; then
		wait -n
		running=$((running - 1))
	fi
done
wait
fail=0
n=0
for t in "$@"; do
	n=$((n + 1))
	echo "== $t"
	cat "$out/$n.log"
	rc=$(cat "$out/$n.rc" 2>/dev/null || echo "none (it did not end)")
	if [ "$rc" != 0 ]; then
		echo "== $t: FAILED, exit $rc"
		fail=1
	fi
done
exit $fail
