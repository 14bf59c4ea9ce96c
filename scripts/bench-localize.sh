#!/usr/bin/env bash
# bench-localize.sh: how well the verdict blames and localizes, over random fault scenarios on a
# SIMULATED rail-optimized fat tree (lib/sim/sim_fabric.h), with and without the fabric's topology. A
# benchmark, not a test: it asserts nothing, it writes results/localize.md.
#
#   scripts/bench-localize.sh              1,000 scenarios at 256 x 8 and at 1,024 x 8
#   RP_LOC_N256=1000 RP_LOC_N1024=1000     scenarios per size (scenario i is the same at every run)
#   RP_LOC_PORTS=32 RP_LOC_SPINES=16       leaf ports and spines of the fat tree
#   RP_LOC_NAME=localize                   results/NAME.md, results/NAME-raw/
#   RP_LOC_JOBS=$(nproc)                   scorer processes at once (each a share of the scenarios)
#   RP_LOC_UNKNOWN=300                     scenarios at 256 x 8 scored again with a topology whose routes
#                                          are unknown (no route line: Slurm's topology.conf gives none)
#
# Each scenario (build/localize-score, scripts/localize_score.c): a background of random dead pairs
# at a rate uniform in [0, 2%] and one fault by kind (scenario i has kind i % 10): none, adapter dead,
# adapter lossy:0.3 (bandwidth below the default --min-bw), adapter flaky:0.4/0.6 (that share of its
# directions dead), cable dead, leaf dead, leaf flaky:0.5, uplink dead, uplink flaky:0.5, spine dead.
# Every direction of the rail pattern is answered from the model as `matrix --transport sim` answers
# it (rp_sim_dir), and the verdict runs on the results (defaults; failures confirmed, as a retest of
# the deterministic model would), without and with the topology (dmodk routes).
set -uo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
NAME=${RP_LOC_NAME:-localize}
RAW=$ROOT/results/$NAME-raw
OUT=$ROOT/results/$NAME.md
N256=${RP_LOC_N256:-1000}
N1024=${RP_LOC_N1024:-1000}
NUNK=${RP_LOC_UNKNOWN:-300}
PORTS=${RP_LOC_PORTS:-32}
SPINES=${RP_LOC_SPINES:-16}
JOBS=${RP_LOC_JOBS:-$(nproc)}
BIN=$ROOT/build/localize-score

make -C "$ROOT" -j2 build/localize-score build/rdmaprobe >/dev/null || exit 1
mkdir -p "$RAW"

run_size() {    # nodes count [suffix]: JOBS processes, each a share of the scenarios, in order
	local f="$RAW/${1}x8${3:-}.txt" t0 t1 j first share pids=()
	t0=$(date +%s)
	share=$(( ($2 + JOBS - 1) / JOBS ))
	for ((j = 0; j < JOBS; j++)); do
		first=$((j * share))
		[ "$first" -lt "$2" ] || break
		nice "$BIN" "$1" 8 "$first" "$(( first + share > $2 ? $2 - first : share ))" "$PORTS" "$SPINES" >"$f.$j" &
		pids+=($!)
	done
	for j in "${!pids[@]}"; do
		wait "${pids[$j]}" || { echo "localize-score $1 (share $j) failed" >&2; exit 1; }
	done
	: >"$f"
	for j in "${!pids[@]}"; do cat "$f.$j" >>"$f" && rm -f "$f.$j"; done
	t1=$(date +%s)
	echo "$1 x 8${3:-}: $2 scenarios in $((t1 - t0)) s ($JOBS processes)" >&2
	echo "$((t1 - t0))" >"$RAW/${1}x8${3:-}.seconds"
}

[ "${RP_LOC_SKIP_RUN:-0}" = 1 ] || {
	[ "$N256" -gt 0 ] && run_size 256 "$N256"
	[ "$N1024" -gt 0 ] && run_size 1024 "$N1024"
	[ "$NUNK" -gt 0 ] && RP_LOC_ROUTE=unknown run_size 256 "$NUNK" -routes-unknown
}

# Columns: i kind component bg topo drains correct expected top1 top3 paths seconds
table() {    # file
	awk '
	function row(key, label) {
		n = runs[key]; if (!n) return
		prec = drains[key] ? sprintf("%.4f", correct[key] / drains[key]) : "-"
		rec = expect[key] ? sprintf("%.4f", correct[key] / expect[key]) : "-"
		t1 = faulted[key] ? sprintf("%.3f", top1[key] / faulted[key]) : "-"
		t3 = faulted[key] ? sprintf("%.3f", top3[key] / faulted[key]) : "-"
		printf "| %s | %d | %d | %s | %s | %.3f | %d | %s | %s | %.3f |\n", label, n, drains[key], prec, rec,
			(drains[key] - correct[key]) / n, falseruns[key], t1, t3, secs[key] / n
	}
	{
		for (k = 0; k < 2; k++) {
			key = (k ? $2 : "all") SUBSEP $5
			runs[key]++; drains[key] += $6; correct[key] += $7; expect[key] += $8
			falseruns[key] += ($6 > $7); secs[key] += $12
			if ($9 >= 0) { faulted[key]++; top1[key] += $9; top3[key] += $10 }
		}
		kinds[$2] = 1
	}
	END {
		split("none adapter-dead adapter-lossy adapter-flaky cable-dead leaf-dead leaf-flaky uplink-dead uplink-flaky spine-dead", order, " ")
		for (t = 0; t < 2; t++) {
			row("all" SUBSEP t, (t ? "**with topology: all**" : "**without topology: all**"))
			for (j = 1; j <= 10; j++)
				row(order[j] SUBSEP t, (t ? "with topology: " : "without topology: ") order[j])
		}
	}' "$1"
}

{
	echo "# Blame and localization over random fault scenarios (simulated rail-optimized fat tree)"
	echo
	echo "Written by \`scripts/bench-localize.sh\` (RP_LOC_N256=$N256 RP_LOC_N1024=$N1024, $PORTS-port leaves, $SPINES spines,"
	echo "dmodk routes), binary \`$("$ROOT/build/rdmaprobe" --version 2>&1 | head -1)\`, $(date -u '+%Y-%m-%d %H:%M UTC')."
	echo "Machine: $(nproc) cores ($(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')), shared with other work, nice 10, $JOBS scorer processes at once (the verdict s column is per process)."
	echo
	echo "SIMULATED scenarios, not a measurement of any fabric. Commands: \`build/localize-score 256 8 0 $N256 $PORTS $SPINES\`"
	echo "and \`build/localize-score 1024 8 0 $N1024 $PORTS $SPINES\` (scripts/localize_score.c; scenario i is a function of i)."
	echo "Each scenario: a background of random dead pairs at a rate uniform in [0, 2%] plus one fault of kind"
	echo "i % 10 on a random component; every direction of the rail pattern answered from the model as"
	echo "\`matrix --transport sim\` answers it (rp_sim_dir), the verdict with default settings, failures confirmed"
	echo "(the model is deterministic: a retest fails the same way), then the same with the topology file"
	echo "\`build/sim-topology MODEL\` writes (native format, \`route dmodk\`)."
	echo
	echo "Drains: correct = the adapter of an adapter or cable fault (the probes cannot tell an adapter from its"
	echo "cable; the adapter is what is taken out of service). Precision = correct / drains, recall = correct /"
	echo "expected; false drains per run = (drains - correct) / runs; runs w/ false = runs with at least one."
	echo "top-1 / top-3: the faulty component is the first / among the first three suspects (the path-fault"
	echo "summary entry not counted); without a topology only adapters can be suspects, so switch faults are"
	echo "never found there (and their adapters are drained when they fail with most peers, as the rule says)."
	for size in 256 1024 256-routes-unknown; do
		f="$RAW/${size/-/x8-}.txt"
		[ "$size" = "${size%-*}" ] && f="$RAW/${size}x8.txt"
		[ -s "$f" ] || continue
		echo
		if [ "$size" != "${size%-*}" ]; then
			echo "## ${size%%-*} nodes x 8 adapters, the topology without routes ($(awk '$5 == 0' "$f" | wc -l) scenarios, $(cat "${f%.txt}.seconds") s)"
			echo
			echo "The same scenarios (the first $NUNK) with the topology's \`route\` line left out, as Slurm's topology.conf gives"
			echo "none: a pair between leaves may use any spine, so no uplink or spine is blamed on its own (\"with topology\""
			echo "rows below; \"without topology\" rows repeat the first section's verdicts)."
		else
			echo "## $size nodes x 8 adapters ($(awk '$5 == 0' "$f" | wc -l) scenarios, $(cat "$RAW/${size}x8.seconds") s)"
		fi
		echo
		echo "| verdict: fault kind | runs | drains | precision | recall | false drains / run | runs w/ false | top-1 | top-3 | verdict s |"
		echo "|---|---|---|---|---|---|---|---|---|---|"
		table "$f"
	done
	echo
	echo "Raw lines: results/$NAME-raw/NODESx8[-routes-unknown].txt (i kind component background topology drains correct expected top1 top3 path-faults seconds)."
} >"$OUT"
echo "wrote $OUT" >&2
