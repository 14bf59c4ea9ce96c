#!/usr/bin/env bash
# bench-blame-scale.sh: the verdict's drains at scale over the SIMULATED NDR-like fabric of
# scripts/bench-sim-scale.sh with random dead pairs (issue 28), counted from the per-node lines that
# bench-sim-scale.sh hides. A benchmark, not a test: it asserts nothing, it writes results/blame-scale.md.
#
#   scripts/bench-blame-scale.sh                 the runs below with build/rdmaprobe
#   RP_BIN_BEFORE=/path/to/old/rdmaprobe          also the same runs with another build (before/after)
#   RP_BLAME_RUNS="256:0.01 1024:0.01 256:0.02"   nodes:dead-fraction, rail pattern, 8 adapters (each run's
#                                               row is kept in results/blame-scale-raw/*.row: the table has
#                                               every run made so far)
set -uo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
RAW=$ROOT/results/blame-scale-raw
OUT=$ROOT/results/blame-scale.md
RUNS=${RP_BLAME_RUNS:-"256:0.01 1024:0.01 256:0.02 1024:0.02"}
AFTER=$ROOT/build/rdmaprobe
BEFORE=${RP_BIN_BEFORE:-}

make -C "$ROOT" -j2 build/rdmaprobe >/dev/null || exit 1
mkdir -p "$RAW"

model() {    # nodes dead-fraction
	printf '# bench-blame-scale.sh: NDR-like (as bench-sim-scale.sh)\nnodes %s\nadapters 8\nrate 400\nbandwidth 390\n' "$1"
	printf 'latency 2us\nsetup 15ms\nround-overhead 5ms\nrandom-dead %s 12\n' "$2"
}

for run in $RUNS; do
	IFS=: read -r nodes dead <<<"$run"
	m="$RAW/rail-${nodes}x8-dead$dead.model"
	model "$nodes" "$dead" >"$m"
	for which in before after; do
		bin=$AFTER
		[ "$which" = before ] && bin=$BEFORE
		[ -n "$bin" ] || continue
		out="$RAW/rail-${nodes}x8-dead$dead-$which.out"
		echo "== $which $nodes x 8 dead $dead" >&2
		nice "$bin" matrix --transport sim --fabric-model "$m" --pattern rail --summary >"$out" 2>/dev/null
		nodes_drained=$(grep '^  node[0-9]*:' "$out" | grep -vc 'drain: none')
		adapters=$(grep '^  node[0-9]*:' "$out" | grep -o 'mlx5_[0-9]*:1 (' | wc -l)
		whole=$(grep -c '(none: no adapter passed)' "$out")
		failed=$(grep -o '[0-9]* failed (0 below' "$out" | head -1 | cut -d' ' -f1)
		paths=$(sed -n 's/^path faults: \([0-9]*\) peer pairs.*/\1/p' "$out")
		echo "| rail ${nodes} x 8, random-dead $dead | $which | \`$("$bin" --version 2>&1 | head -1)\` | ${failed:-?} | $nodes_drained of $nodes | $adapters of $((nodes * 8)) | $whole | ${paths:-not reported} |" \
			>"$RAW/rail-${nodes}x8-dead$dead-$which.row"
	done
done

{
	echo "# Drains at scale over random dead pairs (issue 28)"
	echo
	echo "Written by \`scripts/bench-blame-scale.sh\` (last call: RP_BLAME_RUNS=\"$RUNS\"), $(date -u '+%Y-%m-%d %H:%M UTC')."
	echo "SIMULATED: \`rdmaprobe matrix --transport sim --fabric-model results/blame-scale-raw/RUN.model --pattern rail --summary\`,"
	echo "the NDR-like model of scripts/bench-sim-scale.sh with \`random-dead P 12\` (each unordered pair dead with"
	echo "probability P: a fabric's background of failures that no adapter explains). Counted from the per-node lines"
	echo "(results/blame-scale-raw/RUN-before|after.out): nodes with a drain, adapters drained, nodes told to drain every"
	echo "adapter (\`NCCL_IB_HCA=(none: no adapter passed)\`), and the path faults the new verdict reports instead."
	echo "\"before\" is the count-based verdict (main before issue 28), \"after\" blame by evidence."
	echo
	echo "| run | verdict | binary | failed directions | nodes with a drain | adapters drained | nodes drained whole | path faults (peer pairs) |"
	echo "|---|---|---|---|---|---|---|---|"
	# every run's row so far (a later call with other RP_BLAME_RUNS adds to them), by size and rate
	ls "$RAW"/*.row | sort -t- -k2,2V -k3,3 | xargs cat
} >"$OUT"
echo "wrote $OUT" >&2
