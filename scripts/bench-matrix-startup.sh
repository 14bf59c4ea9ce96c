#!/usr/bin/env bash
# bench-matrix-startup.sh: where the matrix's start-up time goes, and what it is, for one or more
# rdmaprobe binaries in ONE VM boot (issue 12: start-up was most of the wall time in the VM).
# A benchmark, not a test: it asserts nothing, it writes numbers.
#
#   scripts/bench-matrix-startup.sh        (host) boots the VM and runs itself inside; writes
#                                          results/matrix-startup-raw/* (results/matrix-startup.md by hand)
#   RP_BENCH_BINS="after=build/rdmaprobe"  label=binary pairs, run alternately (before=...,after=...)
#   RP_BENCH_E=8                           endpoints (one rxe per rank, rank N = node N on rxeN)
#   RP_BENCH_REPS=3                        runs per binary
#   RP_BENCH_ARGS="-s 4K -n 20 -p sample:1 --timeout 2 --min-bw 0 --outlier 0"
#
# Per run: the wall time of mpirun, the elapsed time the JSON reports (the rounds: rank 0 starts its
# clock after the start-up), start-up = wall - elapsed (launch, MPI_Init, port discovery, the
# exchange), and every start-up line the ranks print on stderr ("start-up" / "STARTUP").
set -uo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
RAW=$ROOT/results/matrix-startup-raw
E=${RP_BENCH_E:-8}
BINS=${RP_BENCH_BINS:-"after=$ROOT/build/rdmaprobe"}
REPS=${RP_BENCH_REPS:-3}
ARGS=${RP_BENCH_ARGS:-"-s 4K -n 20 -p sample:1 --timeout 2 --min-bw 0 --outlier 0"}

if [ "${1:-}" != --inside ]; then
	mkdir -p "$RAW"
	rm -f "$RAW"/*
	list=
	for i in $(seq 0 $((E - 1))); do list=$list${list:+,}$i; done
	RP_BENCH_E=$E RP_BENCH_BINS=$BINS RP_BENCH_REPS=$REPS RP_BENCH_ARGS=$ARGS RP_BENCH_CMD="$0 $*" \
		exec "$ROOT/scripts/testbed/vm.sh" run --fabric "br0:$list" --results "$ROOT/results" \
		--timeout "${RP_BENCH_TIMEOUT:-1500}" -- "$ROOT/scripts/bench-matrix-startup.sh" --inside
fi

log() { echo "bench: $*" >&2; }
RANK=$RAW/rank.sh
cat >"$RANK" <<'SH'
#!/bin/sh
r=$OMPI_COMM_WORLD_RANK
exec "$RP_BENCH_BIN" matrix --node node$r -d =rxe$r "$@"
SH
chmod +x "$RANK"

: >"$RAW/rows"
for rep in $(seq 1 "$REPS"); do
	for lb in $BINS; do
		label=${lb%%=*} bin=${lb#*=} tag=$label-$rep
		echo "RP_BENCH_BIN=$bin mpirun -np $E rank.sh $ARGS --json $tag.json" >"$RAW/$tag.cmd"
		t0=$(date +%s.%N)
		# shellcheck disable=SC2086 # ARGS: matrix options, split on spaces
		RP_BENCH_BIN=$bin mpirun --allow-run-as-root --oversubscribe -np "$E" "$RANK" $ARGS \
			--json "$RAW/$tag.json" >"$RAW/$tag.stdout" 2>"$RAW/$tag.stderr"
		rc=$?
		t1=$(date +%s.%N)
		python3 - "$RAW/$tag.json" "$label" "$rc" "$t0" "$t1" >>"$RAW/rows" <<'PY'
import json, sys
f, label, rc, t0, t1 = sys.argv[1:]
wall = float(t1) - float(t0)
try:
    el = json.load(open(f))["matrix"]["elapsed_s"]
except Exception:
    el = None
print("\t".join(str(x) for x in (label, rc, "%.2f" % wall, el, "%.2f" % (wall - el) if el is not None else "?")))
PY
		log "$tag: $(tail -1 "$RAW/rows")"
		grep -iE "start-up|STARTUP" "$RAW/$tag.stderr" | sed "s/^/$tag: /" >>"$RAW/startup-lines"
	done
done
"${RP_BENCH_BIN:-${BINS#*=}}" --version 2>/dev/null | head -1 >"$RAW/version"
echo "label rc wall_s elapsed_s startup_s" >"$RAW/header"
cat "$RAW/rows"
