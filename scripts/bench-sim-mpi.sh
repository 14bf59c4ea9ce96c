#!/usr/bin/env bash
# bench-sim-mpi.sh: the simulated matrix on R real MPI ranks of this host (mpirun --oversubscribe),
# beside the same model in one process: what the matrix's own protocol costs as the ranks grow (the
# start-up exchange, every round's reports and go through rank 0, the pairs' side channels). A
# benchmark, not a test: it asserts nothing, it writes numbers.
#
#   scripts/bench-sim-mpi.sh              writes results/sim-mpi.md (logs in results/sim-mpi-raw/)
#   RP_SIM_MPI_RANKS="8 16 32 64 128"     the rank counts (one model node, 8 adapters, per rank)
#   RP_SIM_MPI_PATTERN=rail               the pattern
#   RP_BIN=build/rdmaprobe                the binary measured
#   RP_SIM_MPI_NAME=sim-mpi               results/NAME.md and results/NAME-raw/ (e.g. a before/after pair)
#   RP_SIM_MPI_MODES="one mpi"            which runs: one process, mpirun, or both
#
# Every figure but "real" is SIMULATED (the virtual clock of the model, lib/sim/sim_run.h). The real
# times are this 2-core host's, oversubscribed: every rank is a process and every job of a round a
# thread, so they are an upper bound on what the protocol costs, and only their growth with the
# ranks means something.
set -u
ROOT=$(cd "$(dirname "$0")/.." && pwd)
RP=${RP_BIN:-$ROOT/build/rdmaprobe}
RANKS=${RP_SIM_MPI_RANKS:-"8 16 32 64 128"}
PAT=${RP_SIM_MPI_PATTERN:-rail}
NAME=${RP_SIM_MPI_NAME:-sim-mpi}
MODES=${RP_SIM_MPI_MODES:-"one mpi"}
RAW=$ROOT/results/$NAME-raw
OUT=$ROOT/results/$NAME.md
SCRATCH=$(mktemp -d /tmp/rp-sim-mpi.XXXXXX)
trap 'rm -rf "$SCRATCH"' EXIT
command -v mpirun >/dev/null || { echo "bench-sim-mpi: mpirun (openmpi-bin) is needed" >&2; exit 1; }
mkdir -p "$RAW"
rm -f "$RAW"/*

field() {   # file sed-expression
	sed -n "$2" "$1" | head -1
}

rows=()
LOAD0=$(cut -d' ' -f1-3 /proc/loadavg)
for r in $RANKS; do
	m="$RAW/r$r.model"
	printf '# bench-sim-mpi.sh: NDR-like, one node per rank\nnodes %s\nadapters 8\nrate 400\nbandwidth 390\n' "$r" >"$m"
	printf 'latency 2us\nsetup 15ms\nround-overhead 5ms\n' >>"$m"
	for mode in $MODES; do
		name="r$r-$mode"
		args="matrix --transport sim --fabric-model $m --pattern $PAT --nccl-version 2.28.9 --summary --json $SCRATCH/$name.json"
		if [ "$mode" = one ]; then
			cmd="$RP $args"
		else
			cmd="mpirun --allow-run-as-root --oversubscribe -np $r $RP $args"
		fi
		echo "== $name: $cmd" >&2
		echo "$cmd" >"$RAW/$name.cmd"
		/usr/bin/time -f 'time: wall %e s, user %U s, sys %S s, max RSS of one process %M KiB' $cmd \
			>"$RAW/$name.out" 2>"$RAW/$name.err"
		grep -v '^  node' "$RAW/$name.out" >"$RAW/$name.out.tmp" && mv "$RAW/$name.out.tmp" "$RAW/$name.out"
		wall=$(field "$RAW/$name.err" 's/^time: wall \([0-9.]*\) s.*/\1/p')
		real=$(field "$RAW/$name.out" 's/^SIMULATED real time of the rounds on this host: \([0-9.]*\) s (\([0-9.]*\) ms a round.*/\1 | \2/p')
		proj=$(field "$RAW/$name.out" 's/.*projected wall time \([0-9.]*\) s = rounds \([0-9.]*\) s.*/\1 | \2/p')
		rss=$(field "$RAW/$name.out" 's/^SIMULATED rank 0: peak RSS \([0-9.]*\) MiB, CPU \([0-9.]*\) s.*/\1 | \2/p')
		# rank 0's CPU in the rounds: its CPU less the report writes and the final verdict, a round
		r0=$(sed -n 's/^SIMULATED rank 0: peak RSS [0-9.]* MiB, CPU \([0-9.]*\) s (report writes \([0-9.]*\) s, final \([0-9.]*\) s.*/\1 \2 \3/p' "$RAW/$name.out" | head -1)
		nr=$(sed -n 's/^SIMULATED \(PASS\|FAIL\): .* in \([0-9]*\) rounds.*/\2/p' "$RAW/$name.out" | head -1)
		cpu_round=$(echo "$r0 ${nr:-0}" | awk 'NF == 4 && $4 > 0 { printf "%.2f | %.1f", $1 - $2 - $3, 1000 * ($1 - $2 - $3) / $4 }')
		verdict=$(grep -o '^SIMULATED \(PASS\|FAIL\): [0-9]* of [0-9]* pairs ok' "$RAW/$name.out" | sed 's/^SIMULATED //')
		rows+=("| $r | $mode | ${wall:-?} | ${real:-? | ?} | ${proj:-? | ?} | ${rss:-? | ?} | ${cpu_round:-? | ?} | ${verdict:-no verdict: see $name.err} |")
	done
done

{
	echo "# The simulated matrix on real MPI ranks (matrix --transport sim under mpirun)"
	echo
	echo "Written by \`scripts/bench-sim-mpi.sh\` (RP_SIM_MPI_RANKS=\"$RANKS\", pattern $PAT), binary \`$("$RP" --version 2>&1 | head -1)\`, $(date -u '+%Y-%m-%d %H:%M UTC')."
	echo "Machine: $(nproc) cores, $(free -g | awk '/Mem:/{print $2}') GiB, $(uname -sr), $(mpirun --version 2>&1 | head -1); shared with other work."
	echo
	echo "Each model: R nodes x 8 adapters (NDR-like: 400 Gb/s, 15 ms set-up a direction, 5 ms round overhead), healthy."
	echo "\`one\`: one process drives every endpoint. \`mpi\`: \`mpirun -np R\`, rank r drives node r; the start-up"
	echo "exchange, every round's reports and go and the pairs' side channels go over Open MPI (shared memory)."
	echo "Commands: results/$NAME-raw/NAME.cmd; outputs NAME.out, NAME.err. Rank 0's CPU in the rounds: its CPU less"
	echo "its report writes and the final verdict (the NAME.out line \`SIMULATED rank 0: ... CPU\`), and that over the rounds."
	echo "Host load when it started: $LOAD0; when it ended: $(cut -d' ' -f1-3 /proc/loadavg)."
	echo
	echo "| ranks | mode | real wall s | real rounds s | real ms a round | SIMULATED projected wall s | SIMULATED rounds s | rank-0 peak RSS MiB | rank-0 CPU s | rank-0 CPU in the rounds s | rank-0 CPU ms a round | verdict |"
	echo "|---|---|---|---|---|---|---|---|---|---|---|---|"
	printf '%s\n' "${rows[@]}"
} >"$OUT"
echo "wrote $OUT" >&2
