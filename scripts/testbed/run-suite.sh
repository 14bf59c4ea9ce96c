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
	local c=$1 res=$2 name t spec dir log rc t0 secs e0 e1 e2 e3 e4
	name=$(basename "$c" .sh)
	t=$(case_timeout "$c")
	spec=$(header "$c" fabric)
	dir=$res/$name
	rm -rf "$dir"
	mkdir -p "$dir"
	log=$dir/log
	t0=$SECONDS
	rc=0
	e0=$EPOCHREALTIME
	# What the last case's tear-down left (fabric.sh down removes its state folder and every RDMA
	# device): nothing, as a rule, and then the 1.5-3 s of another `fabric.sh down` are saved.
	if [ -d /run/rp-fabric ] || compgen -G '/sys/class/infiniband/*' >/dev/null; then
		bash "$TB_DIR/fabric.sh" down 2>/dev/null || true
	fi
	e1=$EPOCHREALTIME
	if [ -n "$spec" ] && ! bash "$TB_DIR/fabric.sh" up "$spec" >"$dir/fabric.log" 2>&1; then
		rc=1
		echo "e2e: test bed: fabric.sh up '$spec' failed" >"$log"
		cat "$dir/fabric.log" >>"$log"
	else
		e2=$EPOCHREALTIME
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
	e3=$EPOCHREALTIME
	bash "$TB_DIR/fabric.sh" down 2>/dev/null || echo "e2e: warning: fabric.sh down failed after $name" >&2
	e4=$EPOCHREALTIME
	secs=$((SECONDS - t0))
	# Where the case's seconds went: the fabric's tear-down before, its set-up, the case, the tear-down.
	awk -v n="$name" -v a="$e0" -v b="$e1" -v c="${e2:-$e3}" -v d="$e3" -v e="$e4" 'BEGIN {
		printf "%s total %.1f down-before %.1f up %.1f case %.1f down %.1f\n", n, e - a, b - a, c - b, d - c, e - d }' \
		>>"$res/times"
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

# The guest's PATH for the cases: the system's directories first, then the host's (vm.sh passes the
# host's PATH in). The test bed's tools are the distribution's (scripts/install-deps.sh); a wrapper
# that shadows one on the host's PATH costs its own start-up on every call, and under TCG every exec
# counts: a pyenv shim for python3 runs about 250 execs per call (tens of seconds in the guest), where
# /usr/bin/python3 runs one.
guest_path() {
	local d out=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
	local IFS=:
	for d in $PATH; do
		case ":$out:" in *":$d:"*) ;; *) [ -z "$d" ] || out+=":$d" ;; esac
	done
	echo "$out"
}

inside() {
	local res=$1 c
	shift
	[ -e /run/rp-testbed-guest ] || { echo "run-suite.sh --inside runs in the test bed VM only" >&2; exit 2; }
	PATH=$(guest_path)
	export PATH
	for c in "$@"; do
		echo "$(basename "$c" .sh) $(case_timeout "$c")" >"$res/running"
		run_case "$c" "$res"
	done
	: >"$res/inside-done"
}

# Whether case NAME has a result in $res/results.
has_result() {
	awk -v n="$2" '$1 == n { f = 1 } END { exit !f }' "$1/results" 2>/dev/null
}

# The closing line over every case (and "<case>:host" check) in $res/results; a case with no result
# counts as failed. Exits 1 when something failed.
summary() {
	local res=$1 c name pass=0 fail=0 skip=0 st
	shift
	for c in "$@"; do
		name=$(basename "$c" .sh)
		for name in "$name" "$name:host"; do
			st=$(awk -v n="$name" '$1 == n { print $2 }' "$res/results" 2>/dev/null | tail -n 1)
			[ -n "$st" ] || [ "$name" = "$(basename "$c" .sh)" ] || continue
			case $st in
			pass) pass=$((pass + 1)) ;;
			skip) skip=$((skip + 1)) ;;
			*) fail=$((fail + 1)) ;;
			esac
		done
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
	rm -f "$res/times"
	for c in "${cases[@]}"; do total=$((total + $(case_timeout "$c") + 30)); done

	local budget=${RP_E2E_BUDGET:-3300}
	[[ $budget =~ ^[1-9][0-9]*$ ]] || { echo "run-suite.sh: RP_E2E_BUDGET wants whole seconds, not '$budget'" >&2; exit 2; }
	[ $total -le $budget ] || total=$budget
	echo "e2e: ${#cases[@]} case(s) in one VM (limit $total s), logs in $res"
	local t0=$SECONDS
	boots "$res" "$total" "${cases[@]}"
	echo "e2e: suite took $((SECONDS - t0)) s"
	# The split of the cases' own seconds (per case in $res/times; the rest is the VM's boot).
	[ ! -s "$res/times" ] || awk '{ n++; t += $3; f += $5 + $7 + $11; c += $9 } END {
		printf "e2e: %d case(s): %.0f s, of which the cases ran %.0f s and the fabric set-up and tear-down took %.0f s (per case: %s)\n",
			n, t, c, f, FILENAME }' "$res/times"
	host_after "$res" "${cases[@]}"
	summary "$res" "${cases[@]}"
}

# Seconds a case may show no progress before the host declares the guest hung: its own timeout
# (the guest's watchdog kills it then) plus the fabric's set-up and tear-down under TCG.
HANG_GRACE=${RP_E2E_HANG_GRACE:-150}

# One VM boot running cases $3...; sets BOOT_RC (vm.sh's exit) and BOOT_HUNG (the case the guest
# stopped making progress in, or ""). The guest writes "<case> <timeout>" to $res/running as each
# case starts: a case that runs HANG_GRACE s past its timeout means a guest that no longer responds
# (a kernel stuck without a panic, a process that SIGKILL cannot end), and the host ends the VM.
boot_once() {
	local res=$1 limit=$2 boot=$3
	shift 3
	rm -f "$res/running" "$res/inside-done"
	RP_BIN=$RP_BIN "$TB_DIR/vm.sh" run --results "$res" --timeout "$limit" --console "$res/console-$boot.log" -- \
		bash "$TB_DIR/run-suite.sh" --inside "$res" "$@" &
	local vm=$! seen= since=$SECONDS cur name t
	BOOT_HUNG=
	while kill -0 $vm 2>/dev/null; do
		sleep 2
		cur=$(cat "$res/running" 2>/dev/null || true)
		[ "$cur" = "$seen" ] || { seen=$cur; since=$SECONDS; }
		[ -n "$cur" ] || continue
		read -r name t <<<"$cur"
		if [ $((SECONDS - since)) -gt $((t + HANG_GRACE)) ]; then
			BOOT_HUNG=$name
			echo "e2e: the guest made no progress for $((SECONDS - since)) s in $name (timeout $t s); ending the VM"
			kill -TERM $vm 2>/dev/null || true
			break
		fi
	done
	BOOT_RC=0
	wait $vm || BOOT_RC=$?
}

# Why boot $2 ended before its cases did, in a few words.
boot_why() {
	local res=$1 boot=$2 crash
	crash=$(grep -m 1 -E 'BUG: soft lockup|Kernel panic|BUG: unable to handle|general protection fault|Oops:' \
		"$res/console-$boot.log" 2>/dev/null || true)
	if [ -n "$BOOT_HUNG" ]; then
		echo "the guest stopped responding"
	elif [ -n "$crash" ]; then
		echo "the guest kernel crashed: ${crash#*] }"
	elif [ "$BOOT_RC" -eq 124 ]; then
		echo "the suite ran out of its time limit"
	else
		echo "the VM ended early (vm.sh exit $BOOT_RC)"
	fi
}

# Every case, in as many boots as it takes: a guest kernel that crashes or hangs (a test bed
# failure, such as the rxe soft lockup one CI run met) ends that boot, the case it happened in is
# reported with the console log, and the cases after it go on in a fresh boot. The case itself runs
# again, first in the new boot, up to RP_E2E_CRASH_RERUNS times (default 2: 6.1's rxe locks up in
# about one boot in three of e2e 61's path MTU black hole, on kernels 6.1.0-56 and -57); one crash
# more is its failure. Only a crash of the guest kernel is run again, never a case's own failure;
# nothing counts as passed that did not pass, and what ran again is listed at the end.
boots() {
	local res=$1 limit=$2 t0=$SECONDS boot=0 again=() c name cur left
	shift 2
	local pending=("$@")
	while [ ${#pending[@]} -gt 0 ]; do
		boot=$((boot + 1))
		left=$((limit - (SECONDS - t0)))
		if [ $left -lt 60 ]; then
			for c in "${pending[@]}"; do
				name=$(basename "$c" .sh)
				echo "e2e: FAIL $name (not run: the suite's time limit of $limit s is spent)"
				echo "$name fail" >>"$res/results"
			done
			break
		fi
		[ $boot -eq 1 ] || echo "e2e: boot $boot: ${#pending[@]} case(s) left"
		boot_once "$res" "$left" "$boot" "${pending[@]}"
		[ ! -e "$res/inside-done" ] || break
		cur=$(cat "$res/running" 2>/dev/null || true)
		cur=${cur%% *}
		local rest=() crashed=
		for c in "${pending[@]}"; do
			name=$(basename "$c" .sh)
			has_result "$res" "$name" && continue
			if [ "$name" = "$cur" ]; then crashed=$c; else rest+=("$c"); fi
		done
		if [ -z "$crashed" ]; then
			# Ended outside any case: before the first (boot, fabric) or after a result.
			if [ -z "$cur" ]; then
				for c in "${pending[@]}"; do
					name=$(basename "$c" .sh)
					echo "e2e: FAIL $name (not run: $(boot_why "$res" "$boot"))"
					echo "$name fail" >>"$res/results"
				done
				break
			fi
			pending=("${rest[@]}")
			continue
		fi
		name=$(basename "$crashed" .sh)
		local why
		why=$(boot_why "$res" "$boot")
		local crashes
		crashes=$(printf '%s\n' "${again[@]}" | grep -cx -- "$name" || true)
		if [ "$crashes" -ge "${RP_E2E_CRASH_RERUNS:-2}" ]; then
			echo "e2e: FAIL $name ($why, crash $((crashes + 1)) of its runs; console: $res/console-$boot.log)"
			echo "$name fail" >>"$res/results"
			pending=("${rest[@]}")
		else
			echo "e2e: RERUN $name: $why while it ran (console: $res/console-$boot.log); it runs again in a fresh boot"
			again+=("$name")
			pending=("$crashed" "${rest[@]}")
		fi
	done
	[ ${#again[@]} -eq 0 ] ||
		echo "e2e: note: ran again after a test bed crash or hang: $(printf '%s\n' "${again[@]}" | sort | uniq -c |
			awk '{printf "%s%s (%d crash%s)", (NR > 1 ? ", " : ""), $2, $1, ($1 > 1 ? "es" : "")}') (their consoles are in $res)"
}

# The `# host-after:` checks of the cases that passed in the VM, then the closing line over all.
host_after() {
	local res=$1 c name cmd rc
	shift
	for c in "$@"; do
		cmd=$(header "$c" host-after)
		[ -n "$cmd" ] || continue
		name=$(basename "$c" .sh)
		awk -v n="$name" '$1 == n && $2 == "pass" { f = 1 } END { exit !f }' "$res/results" || continue
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
}

if [ "${1:-}" = --skip-result ]; then   # for checking the rule by hand: --skip-result CASE
	skip_result "$2"
elif [ "${1:-}" = --inside ]; then
	shift
	inside "$@"
else
	host "$@"
fi
