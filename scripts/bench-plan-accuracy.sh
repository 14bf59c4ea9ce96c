#!/usr/bin/env bash
# bench-plan-accuracy.sh: how close matrix --plan's estimate comes to a measured VM run, uncalibrated
# and calibrated (--calibrate-from) from a smaller run of the same boot. A benchmark, not a test: it
# asserts nothing, it writes numbers (issue 12: "--plan agreeing with measured VM runs within 20%").
#
#   scripts/bench-plan-accuracy.sh      (host) boots the VM, measures full over 4 and 8 endpoints (one
#                                       rxe per rank, one bridge), then plans the 8-endpoint run three
#                                       ways; writes results/plan-accuracy-raw/* and prints the table
#   RP_BENCH_ARGS="-s 64K -n 200"       matrix options of every run and plan
set -uo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
RAW=$ROOT/results/plan-accuracy-raw
ARGS=${RP_BENCH_ARGS:-"-s 64K -n 200"}
RP=$ROOT/build/rdmaprobe

if [ "${1:-}" != --inside ]; then
	mkdir -p "$RAW"
	rm -f "$RAW"/*
	[ -x "$RP" ] || make -C "$ROOT" -j2 >/dev/null || exit 1
	RP_BENCH_ARGS=$ARGS "$ROOT/scripts/testbed/vm.sh" run --results "$ROOT/results" --timeout 900 -- \
		"$ROOT/scripts/bench-plan-accuracy.sh" --inside || exit 1
	# shellcheck disable=SC2086 # ARGS: matrix options, split on spaces
	{
		"$RP" matrix --plan --nodes 8 --hcas 1 --rate 10 $ARGS >"$RAW/plan-8-uncal.txt"
		"$RP" matrix --plan --nodes 8 --hcas 1 --rate 10 $ARGS --calibrate-from "$RAW/full-4.json" >"$RAW/plan-8-cal4.txt"
		"$RP" matrix --plan --nodes 8 --hcas 1 --rate 10 $ARGS --calibrate-from "$RAW/full-8.json" >"$RAW/plan-8-cal8.txt"
		"$RP" matrix --plan --nodes 4 --hcas 1 --rate 10 $ARGS --calibrate-from "$RAW/full-4.json" >"$RAW/plan-4-cal4.txt"
	} || exit 1
	python3 - "$RAW" <<'PY'
import json, re, sys
raw = sys.argv[1]
wall = {l.split()[0]: float(l.split()[1]) for l in open(raw + "/walls")}
def est(f):
    return float(re.search(r"^estimated time: ([0-9.]+) s", open(raw + "/" + f).read(), re.M).group(1))
for e in (4, 8):
    m = json.load(open("%s/full-%d.json" % (raw, e)))["matrix"]
    print("full-%d: wall %.1f s, start-up %.1f s, rounds %.1f s" % (e, wall["full-%d" % e], m["startup_s"], m["elapsed_s"]))
for f, e in (("plan-8-uncal.txt", 8), ("plan-8-cal4.txt", 8), ("plan-8-cal8.txt", 8), ("plan-4-cal4.txt", 4)):
    w = wall["full-%d" % e]
    print("%s: estimate %.1f s, measured wall %.1f s, estimate / measured %.2f" % (f, est(f), w, est(f) / w))
PY
	exit 0
fi

FABRIC=$ROOT/scripts/testbed/fabric.sh
RANK=$RAW/rank.sh
cat >"$RANK" <<EOF
#!/bin/sh
r=\$OMPI_COMM_WORLD_RANK
exec "$RP" matrix --node node\$r -d =rxe\$r "\$@"
EOF
chmod +x "$RANK"
: >"$RAW/walls"
for e in 4 8; do
	list=$(seq -s, 0 $((e - 1)))
	bash "$FABRIC" down 2>/dev/null
	bash "$FABRIC" up "br0:$list" >"$RAW/full-$e.fabric" 2>&1 || { echo "fabric up failed" >&2; exit 1; }
	echo "mpirun -np $e rank.sh $ARGS --json full-$e.json" >"$RAW/full-$e.cmd"
	t0=$(date +%s.%N)
	# shellcheck disable=SC2086 # ARGS: matrix options, split on spaces
	mpirun --allow-run-as-root --oversubscribe -np "$e" "$RANK" $ARGS --json "$RAW/full-$e.json" \
		>"$RAW/full-$e.stdout" 2>"$RAW/full-$e.stderr"
	echo "full-$e exit $?" >&2
	t1=$(date +%s.%N)
	echo "full-$e $(echo "$t1 - $t0" | bc)" >>"$RAW/walls"
done
bash "$FABRIC" down 2>/dev/null
