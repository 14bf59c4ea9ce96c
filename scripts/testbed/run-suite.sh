#!/usr/bin/env bash
# run-suite.sh: the end-to-end suite on real Soft-RoCE devices, every case in ONE VM boot.
#
#   scripts/testbed/run-suite.sh                      every tests/e2e/*.sh, in name order
#   scripts/testbed/run-suite.sh tests/e2e/30-*.sh    only these
#
# On the host: builds build/rdmaprobe when RP_BIN is not given, boots the VM (vm.sh) and runs itself
# inside with --inside. Inside, per case: the `# fabric: SPEC` header's fabric is set up fresh (and
# torn down after), the case runs with a `# timeout: S` header's limit (default 120 s) in its own
# process group, with RP_BIN, RP_FABRIC, RP_RESULTS (a per-case rw folder), RP_ROOT set and the repo
# root as cwd. Exit 0 = pass, 77 = skip, anything else = fail.
# A skip must be allowed: under CI=true a case (or its host-after check) that exits 77 fails unless
# its header says why it may skip, `# may-skip: WHY` (e.g. "no GPU in the test bed"); elsewhere such
# a skip is reported with a note that CI would fail it.
# Prints one line per case and closes with `e2e: N passed, N failed, N skipped`; exits 1 when a
# case failed. Logs: RP_E2E_RESULTS (default build/e2e/latest -> a fresh per-run folder).
# When the VM cannot run here it says so LOUDLY and exits non-zero: 1 in CI (CI=true), else 77.
# A case may add `# host-after: CMD`: after the VM, CMD runs on the host (cwd the repo root, with
# RP_RESULTS the case's folder), for what the emulated guest is too slow to do, such as rendering a
# page in Chromium. It counts as a result of its own, "<case>:host" (0 pass, 77 skip, else fail).
set -euo pipefail

TB_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$TB_DIR/../.." && pwd)
DEFAULT_TIMEOUT=120

# The `# key: value` header of a case (first 30 lines), or "".
header() {
	sed -n "1,30s/^# $2:[[:space:]]*\\(.*[^[:space:]]\\)[[:space:]]*\$/\\1/p" "$1" | head -n 1
}

case_timeout() {
	local t
	t=$(header "$1" timeout)
	[[ $t =~ ^[1-9][0-9]*$ ]] && echo "$t" || echo $DEFAULT_TIMEOUT
}

# The note for a skip of case $1 that CI would fail, else "".
skip_note() {
	[ "$(skip_result "$1")" = skip-unallowed ] && echo " (no '# may-skip:' header: CI=true fails this skip)"
	return 0
}

# What a skip (exit 77) of case $1 counts as: "skip" when its `# may-skip:` header allows it, "fail"
# under CI=true without that header, "skip-unallowed" (a skip, with a note) elsewhere.
skip_result() {
	local why
	why=$(header "$1" may-skip)
	if [ -n "$why" ]; then
		echo skip
	elif [ "${CI:-}" = true ]; then
		echo fail
	else
		echo skip-unallowed
	fi
}

# --- inside the VM ---------------------------------------------------------------------------------

# Run one case in its own process group under a watchdog; print its result line, append it to
# $res/results. Sets nothing global but the counters.
run_case() {
	local c=$1 res=$2 name t spec dir log rc t0 secs
	name=$(basename "$c" .sh)
	t=$(case_timeout "$c")
	spec=$(header "$c" fabric)
	dir=$res/$name
	rm -rf "$dir"
	mkdir -p "$dir"
	log=$dir/log
	t0=$SECONDS
	rc=0
	bash "$TB_DIR/fabric.sh" down 2>/dev/null || true
	if [ -n "$spec" ] && ! bash "$TB_DIR/fabric.sh" up "$spec" >"$dir/fabric.log" 2>&1; then
		rc=1
		echo "e2e: test bed: fabric.sh up '$spec' failed" >"$log"
		cat "$dir/fabric.log" >>"$log"
	else
		(cd "$ROOT" && RP_BIN=$RP_BIN RP_FABRIC=$TB_DIR/fabric.sh RP_RESULTS=$dir RP_ROOT=$ROOT \
			RP_CASE=$name exec setsid bash "$c" </dev/null >"$log" 2>&1) &
		local pid=$!
		setsid bash -c 'sleep "$1"; : >"$3"; kill -TERM -- "-$2"; sleep 5; kill -KILL -- "-$2"' \
			watchdog "$t" "$pid" "$dir/timed-out" </dev/null >/dev/null 2>&1 &
		local wd=$!
		wait "$pid" || rc=$?
		kill -KILL -- "-$wd" 2>/dev/null || true
		kill -KILL -- "-$pid" 2>/dev/null || true   # what the case left running
		wait "$wd" 2>/dev/null || true
		if [ -e "$dir/timed-out" ]; then
			rc=124
			echo "e2e: killed after the case's timeout of $t s" >>"$log"
		fi
	fi
	bash "$TB_DIR/fabric.sh" down 2>/dev/null || echo "e2e: warning: fabric.sh down failed after $name" >&2
	secs=$((SECONDS - t0))
	if [ $rc -eq 0 ]; then
		echo "e2e: PASS $name (${secs} s)"
		echo "$name pass" >>"$res/results"
	elif [ $rc -eq 77 ] && [ "$(skip_result "$c")" != fail ]; then
		echo "e2e: SKIP $name (${secs} s): $(grep -v '^[[:space:]]*$' "$log" | tail -n 1)$(skip_note "$c")"
		echo "$name skip" >>"$res/results"
	elif [ $rc -eq 77 ]; then
		echo "e2e: FAIL $name (skipped under CI=true, and its header has no '# may-skip: WHY'):" \
			"$(grep -v '^[[:space:]]*$' "$log" | tail -n 1)"
		echo "$name fail" >>"$res/results"
	else
		if [ $rc -eq 124 ]; then
			echo "e2e: FAIL $name (timed out after $t s)"
		else
			echo "e2e: FAIL $name (exit $rc, ${secs} s)"
		fi
		tail -n "${RP_E2E_TAIL:-40}" "$log" | sed 's/^/    | /'
		echo "$name fail" >>"$res/results"
	fi
}

inside() {
	local res=$1 c
	shift
	[ -e /run/rp-testbed-guest ] || { echo "run-suite.sh --inside runs in the test bed VM only" >&2; exit 2; }
	: >"$res/results"
	for c in "$@"; do
		run_case "$c" "$res"
	done
	summary "$res" "$@"
}

# The closing line from $res/results; a case with no result (VM died) counts as failed.
summary() {
	local res=$1 c name pass=0 fail=0 skip=0 st
	shift
	for c in "$@"; do
		name=$(basename "$c" .sh)
		st=$(awk -v n="$name" '$1 == n { print $2 }' "$res/results" 2>/dev/null | tail -n 1)
		case $st in
		pass) pass=$((pass + 1)) ;;
		skip) skip=$((skip + 1)) ;;
		*) fail=$((fail + 1)) ;;
		esac
	done
	echo "e2e: $pass passed, $fail failed, $skip skipped" | tee "$res/summary"
	[ $fail -eq 0 ]
}

# --- on the host -----------------------------------------------------------------------------------

loud() {
	{
		echo "###########################################################################"
		echo "# e2e: THE SOFT-ROCE VM SUITE DID NOT RUN"
		echo "# $1"
		echo "# Install what it needs with scripts/install-deps.sh (QEMU, busybox-static,"
		echo "# apt access to linux-image-amd64). The real-device tests are not optional:"
		echo "# 'make check' runs the unit tests alone."
		echo "###########################################################################"
	} >&2
	if [ "${CI:-}" = true ]; then exit 1; fi
	exit 77
}

host() {
	local cases=() c
	if [ $# -eq 0 ]; then
		for c in "$ROOT"/tests/e2e/*.sh; do [ -f "$c" ] && cases+=("$c"); done
	else
		for c in "$@"; do
			[ -f "$c" ] || { echo "run-suite.sh: no such case: $c" >&2; exit 2; }
			cases+=("$(cd "$(dirname "$c")" && pwd -P)/$(basename "$c")")
		done
	fi
	[ ${#cases[@]} -gt 0 ] || { echo "run-suite.sh: no cases in tests/e2e" >&2; exit 2; }

	if [ -z "${RP_BIN:-}" ]; then
		make -C "$ROOT" -s build/rdmaprobe >&2 || { echo "run-suite.sh: building build/rdmaprobe failed" >&2; exit 1; }
		RP_BIN=$ROOT/build/rdmaprobe
	fi
	[ -x "$RP_BIN" ] || { echo "run-suite.sh: RP_BIN=$RP_BIN is not an executable" >&2; exit 1; }
	RP_BIN=$(cd "$(dirname "$RP_BIN")" && pwd -P)/$(basename "$RP_BIN")

	local why
	if ! why=$("$TB_DIR/vm.sh" check 2>&1); then
		loud "${why:-vm.sh check failed}"
	fi

	local res total=120
	if [ -n "${RP_E2E_RESULTS:-}" ]; then
		res=$RP_E2E_RESULTS
		mkdir -p "$res"
	else
		mkdir -p "$ROOT/build/e2e"
		res=$(mktemp -d "$ROOT/build/e2e/run-$(date +%Y%m%d-%H%M%S)-XXXX")
		ln -sfn "$(basename "$res")" "$ROOT/build/e2e/latest"
	fi
	res=$(cd "$res" && pwd -P)
	: >"$res/results"
	for c in "${cases[@]}"; do total=$((total + $(case_timeout "$c") + 30)); done

	echo "e2e: ${#cases[@]} case(s) in one VM (limit $total s), logs in $res"
	local t0=$SECONDS rc=0
	RP_BIN=$RP_BIN "$TB_DIR/vm.sh" run --results "$res" --timeout "$total" -- \
		bash "$TB_DIR/run-suite.sh" --inside "$res" "${cases[@]}" || rc=$?
	echo "e2e: suite took $((SECONDS - t0)) s"
	if [ ! -f "$res/summary" ]; then
		echo "e2e: the VM ended before the suite finished (vm.sh exit $rc); cases without a result count as failed"
		summary "$res" "${cases[@]}" || true
		exit 1
	fi
	[ $rc -eq 0 ] || exit 1
	host_after "$res" "${cases[@]}"
}

# The `# host-after:` checks of the cases that passed in the VM, then the closing line over all.
host_after() {
	local res=$1 c name cmd rc n=0
	shift
	for c in "$@"; do
		cmd=$(header "$c" host-after)
		[ -n "$cmd" ] || continue
		name=$(basename "$c" .sh)
		awk -v n="$name" '$1 == n && $2 == "pass" { f = 1 } END { exit !f }' "$res/results" || continue
		n=$((n + 1))
		rc=0
		(cd "$ROOT" && RP_BIN=$RP_BIN RP_ROOT=$ROOT RP_RESULTS=$res/$name RP_CASE=$name \
			bash -c "$cmd" </dev/null >"$res/$name/host-log" 2>&1) || rc=$?
		case $rc in
		0) echo "e2e: PASS $name:host"; echo "$name:host pass" >>"$res/results" ;;
		77) if [ "$(skip_result "$c")" = fail ]; then
			echo "e2e: FAIL $name:host (skipped under CI=true without '# may-skip: WHY'): $(tail -n 1 "$res/$name/host-log")"
			echo "$name:host fail" >>"$res/results"
		    else
			echo "e2e: SKIP $name:host: $(tail -n 1 "$res/$name/host-log")$(skip_note "$c")"
			echo "$name:host skip" >>"$res/results"
		    fi ;;
		*) echo "e2e: FAIL $name:host (exit $rc)"; sed 's/^/    | /' "$res/$name/host-log" | tail -n 20
		   echo "$name:host fail" >>"$res/results" ;;
		esac
	done
	[ $n -gt 0 ] || return 0
	awk '{ st[$1] = $2 } END { for (k in st) c[st[k]]++;
		printf "e2e: %d passed, %d failed, %d skipped\n", c["pass"], c["fail"], c["skip"]; exit (c["fail"] > 0) }' \
		"$res/results" | tee "$res/summary"
}

if [ "${1:-}" = --skip-result ]; then   # for checking the rule by hand: --skip-result CASE
	skip_result "$2"
elif [ "${1:-}" = --inside ]; then
	shift
	inside "$@"
else
	host "$@"
fi
