#!/usr/bin/env bash
# bench-sim-scale.sh: the matrix at cluster scale over a SIMULATED fabric (matrix --transport sim),
# on this host, no VM, no MPI. A benchmark, not a test: it asserts nothing, it writes numbers.
#
#   scripts/bench-sim-scale.sh            writes results/sim-scale.md (models and logs in
#                                         results/sim-scale-raw/; the reports themselves go to a
#                                         scratch directory and only their sizes are kept)
#   RP_SIM_RUNS="full:64:8:0 rail:256:8:0.01:16"   pattern:nodes:adapters:dead-fraction[:sweep W|auto[:hold]],
#                                         in order; without a sweep field the run has --sweep off; hold is
#                                         --hold's (auto|off; default auto), a run with off is named -holdoff
#   RP_SIM_RSS_MAX_GIB=16                 a run whose RSS passes this is stopped (the machine is shared)
#   RP_SIM_TIMEOUT=600                    seconds per run
#   RP_BIN=build/rdmaprobe                 the binary measured
#   RP_SIM_NAME=sim-scale                 the results' name (results/NAME.md, results/NAME-raw/)
#   RP_SIM_OUTPUTS="--json r.json ..."    the reports written (default: JSON, CSV, HTML and JUnit; the
#                                         HTML page needs every result whole while it is written)
#
# The model: NDR-like links (rate 400, bandwidth 390 Gb/s, 2 us, 15 ms set-up per direction, 5 ms
# round overhead), default engine settings (64 KiB x 1000 writes per direction, --retest 1). A run
# without a sweep field is the lock-step scheduler alone (--sweep off: every round waits for its
# slowest pair), the baseline the reachability sweep (the default since the sweep went default-on)
# is measured against.
set -uo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
NAME=${RP_SIM_NAME:-sim-scale}   # results/NAME.md and results/NAME-raw/
RAW=$ROOT/results/$NAME-raw
OUT=$ROOT/results/$NAME.md
OUTPUTS=${RP_SIM_OUTPUTS:-"--json r.json --csv r.csv --html r.html --junit r.xml"}
RUNS=${RP_SIM_RUNS:-"full:64:8:0 rail:64:8:0 rail:128:8:0 rail:256:8:0 rail:256:8:0.01 rail:1024:8:0 rail:1024:8:0.01"}
RSS_MAX_KIB=$(( ${RP_SIM_RSS_MAX_GIB:-16} * 1024 * 1024 ))
TIMEOUT=${RP_SIM_TIMEOUT:-600}
RP=${RP_BIN:-$ROOT/build/rdmaprobe}   # RP_BIN: another build (a before/after comparison)
SCRATCH=$(mktemp -d /tmp/rp-sim-scale.XXXXXX)
trap 'rm -rf "$SCRATCH"' EXIT

[ -x "$RP" ] || make -C "$ROOT" -j2 >/dev/null || exit 1
mkdir -p "$RAW"
rm -f "$RAW"/*

# Run "$@" with a watchdog on its RSS; prints "killed" on fd 3 when it had to stop it.
watched() {
	"$@" &
	local pid=$! rss
	while kill -0 "$pid" 2>/dev/null; do
		rss=$(awk '/VmRSS/{print $2}' "/proc/$pid/status" 2>/dev/null)
		if [ -n "$rss" ] && [ "$rss" -gt "$RSS_MAX_KIB" ]; then
			echo "watchdog: RSS ${rss} KiB passed ${RSS_MAX_KIB} KiB: stopped" >&2
			kill "$pid"
		fi
		sleep 0.5
	done
	wait "$pid"
}

model() {    # nodes adapters dead-fraction
	printf '# bench-sim-scale.sh: NDR-like\nnodes %s\nadapters %s\nrate 400\nbandwidth 390\nlatency 2us\n' "$1" "$2"
	printf 'setup 15ms\nround-overhead 5ms\n'
	[ "$3" != 0 ] && printf 'random-dead %s 12\n' "$3"
}

rows=()
for run in $RUNS; do
	IFS=: read -r pat nodes ad dead sw hold <<<"$run"
	name="$pat-${nodes}x$ad-dead$dead${sw:+-sweep$sw}${hold:+-hold$hold}"
	extra="--sweep ${sw:-off}${hold:+ --hold $hold}"
	m="$RAW/$name.model"
	model "$nodes" "$ad" "$dead" >"$m"
	rm -f "$SCRATCH"/*
	cmd="rdmaprobe matrix --transport sim --fabric-model $m --pattern $pat $extra --summary $OUTPUTS"
	echo "== $name: $cmd" >&2
	( cd "$SCRATCH" && timeout "$TIMEOUT" /usr/bin/time -f 'time: wall %e s, user %U s, sys %S s, max RSS %M KiB' \
		bash -c "$(declare -f watched); RSS_MAX_KIB=$RSS_MAX_KIB watched nice '$RP' matrix --transport sim \
		--fabric-model '$m' --pattern $pat $extra --summary $OUTPUTS" \
		>"$RAW/$name.out" 2>"$RAW/$name.err" )
	rc=$?
	grep -v '^  node' "$RAW/$name.out" >"$RAW/$name.out.tmp"
	mv "$RAW/$name.out.tmp" "$RAW/$name.out"
	proj=$(sed -n 's/.*projected wall time \([0-9.]*\) s = rounds \([0-9.]*\) s + rank 0 collecting them \([0-9.]*\) s + planning the retests [0-9.]* s + writing reports \([0-9.]*\) s (\([0-9]*\) writes) + final verdict and reports \([0-9.]*\) s.*/\1|\2|\3|\4 (\5)|\6/p' "$RAW/$name.out")
	rounds=$(sed -n 's/^SIMULATED rounds: \([0-9]*\) planned + \([0-9]*\) retest.* \([0-9]*\) results kept.*/\1 + \2|\3/p' "$RAW/$name.out")
	cpu=$(sed -n 's/^SIMULATED rank 0: peak RSS \([0-9.]*\) MiB, CPU \([0-9.]*\) s (report writes \([0-9.]*\) s, final \([0-9.]*\) s.*/\1|\2 (\3 writing, \4 final)/p' "$RAW/$name.out")
	heap=$(sed -n 's/^SIMULATED rank 0: heap in use at most \([0-9.]*\) MiB.*/\1/p' "$RAW/$name.out")
	sizes=$(sed -n 's/^SIMULATED report sizes (bytes): json \(-*[0-9]*\), csv \(-*[0-9]*\), html \(-*[0-9]*\), junit \(-*[0-9]*\)/\1 \/ \2 \/ \3 \/ \4/p' "$RAW/$name.out")
	verdict=$(grep -o '^SIMULATED \(PASS\|FAIL\): [0-9]* of [0-9]* pairs ok, [0-9]* failed' "$RAW/$name.out" | sed 's/^SIMULATED //')
	wall=$(grep -o 'wall [0-9.]* s' "$RAW/$name.err" | tail -1)
	if [ -z "$proj" ]; then
		last=$(grep 'done:' "$RAW/$name.err" | tail -1 | sed 's/^rdmaprobe matrix (SIMULATED): //')
		why=$(grep -o 'watchdog: .*' "$RAW/$name.err" | head -1)
		[ -z "$why" ] && [ "$rc" = 124 ] && why="stopped at the ${TIMEOUT} s limit"
		[ -z "$why" ] && why="exit $rc"
		rows+=("| $name | DID NOT FINISH: $why; last progress: ${last:-none} | | | | | | | | $wall |")
	else
		rows+=("| $name | $proj | $rounds | $cpu | ${heap:--} | $sizes | $verdict | $wall |")
	fi
done

{
	echo "# Simulated matrix at scale (matrix --transport sim): the lock-step scheduler${RP_SIM_TITLE:+, $RP_SIM_TITLE}"
	echo
	echo "Written by \`scripts/bench-sim-scale.sh\` (RP_SIM_RUNS=\"$RUNS\"), binary \`$("$RP" --version 2>&1 | head -1)\`, $(date -u '+%Y-%m-%d %H:%M UTC')."
	echo "Machine: $(nproc) cores ($(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')), $(free -g | awk '/Mem:/{print $2}') GiB, $(uname -sr); shared with other work, runs at nice 10."
	echo
	echo "SIMULATED figures, not a measurement of any fabric. One process runs the real schedule, rounds"
	echo "(lib/mx_run, lib/mx_round), retest, verdict and the four report writers; every side is answered"
	echo "from the model (lib/sim/sim_model.h) on a virtual clock. Model: rate 400, bandwidth 390 Gb/s, latency"
	echo "2 us, set-up 15 ms per direction, round overhead 5 ms, default engine settings (64 KiB x 1000"
	echo "writes per direction, qp-timeout 14, retry-cnt 7, timeout 10 s, --retest 1); dead links by"
	echo "\`random-dead P 12\` (each unordered pair with probability P). Each run's command:"
	echo "\`rdmaprobe matrix --transport sim --fabric-model results/$NAME-raw/RUN.model --pattern P --sweep W|off [--hold auto|off] --summary $OUTPUTS\`"
	echo "(a run named ...-sweepW ran with \`--sweep W\`: the reachability sweep of lib/matrix/mx_sweep.h, its probes of"
	echo "one endpoint taken to run at once, a sweep round lasting its slowest probe direction (since 9730dce each direction is its own probe; before, twice that: a pair's two directions one after the other))."
	echo
	echo "Runs without -sweep ran with \`--sweep off\`: the BASELINE of the lock-step scheduler alone (a"
	echo "round waits for its slowest pair) against which the sweep (the default, \`--sweep auto\`: 64) is"
	echo "measured. A run named ...-holdoff ran with \`--hold off\`: every bandwidth direction on a new"
	echo "connection (its set-up counted), the sweep's rounds all first; without it, \`--hold auto\` (the default"
	echo "since it was built): a direction whose probe passed measured on the probe's connection (no set-up),"
	echo "the sweep's rounds interleaved with the planned ones (lib/matrix/mx_hold.h)."
	echo
	echo "Projected wall = the rounds (each its slowest endpoint + 5 ms) + rank 0's collection of every"
	echo "round (from its sides' end to the results kept) + its report writes between rounds (both measured"
	echo "here, real seconds: every rank waits for the go meanwhile; written on the real front end's rule,"
	echo "at most a fifth of the time, on the virtual clock) + the final verdict and reports. With one rank"
	echo "the collection takes the sides as rank 0's own, each checked as a REPORT's side is (unpacked and"
	echo "validated, as a real rank 0 does for every side below it); no message is sent. Start-up"
	echo "(discovery, the exchange) is not included. CPU and RSS are the whole process:"
	echo "rank 0 plus every rank's sides (answered on rank 0's thread since they are one rank), so more than a real rank 0."
	echo "Heap = rank 0's heap in use (mallinfo2), at its highest of the samples taken after every round"
	echo "and sweep round, in the middle of every JSON write (the verdict held) and every 5 ms while a"
	echo "verdict runs (its scratch): what a real rank 0 holds, with every rank's sides' heap of a round"
	echo "(their packed results)."
	echo
	echo "| run | projected wall s | rounds s | rank 0 collecting s | writes s (count) | final s | rounds planned + retest | results kept | process peak RSS MiB | CPU s | rank-0 heap MiB | report bytes json / csv / html / junit | verdict | real wall |"
	echo "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"
	for r in "${rows[@]}"; do echo "$r"; done
	echo
	echo "Logs: results/$NAME-raw/RUN.out (stdout without the per-node lines) and RUN.err (progress, GNU time)."
} >"$OUT"
echo "wrote $OUT" >&2
