#!/usr/bin/env bash
# bench-matrix-scale.sh: the matrix's wall time with and without one bad endpoint, in ONE VM boot.
# A benchmark, not a test: it asserts nothing, it writes numbers (issue 12's headline figure).
#
#   scripts/bench-matrix-scale.sh          (host) boots the VM and runs itself inside; writes
#                                          results/matrix-scale.md and results/matrix-scale-raw/*
#   RP_BENCH_EPS="4 8"                     endpoint counts (one rxe per rank, ranks oversubscribed)
#   RP_BENCH_SCENARIOS="healthy bridge loss"
#   RP_BENCH_ARGS="-s 64K -n 200"         matrix options for every run
#   RP_BENCH_VARIANTS="plain default"      per variant every scenario again: plain (--sweep off), default
#                                          (no --sweep: the binary's default), sweep:W (--sweep W), or
#                                          nohold (--hold off: the default sweep, every connection new);
#                                          VARIANT@BIN runs it with the rdmaprobe binary BIN (another
#                                          build, say the one before a change, in the same boot)
#   RP_BENCH_NAME=matrix-scale             results/NAME.md and results/NAME-raw/ (git-ignored)
#
# Scenarios, each on E endpoints rxe0..rxe(E-1), rank N = node N on rxeN:
#   healthy  every device on one bridge;
#   bridge   the last device on a bridge of its own (unreachable from the others: fails fast);
#   loss     every device on one bridge, the last one's link at 100% netem loss (packets vanish
#            silently: every pair with it runs into its deadline);
#   uplink   two leaves (the first half of the devices, the second) joined by a spine, the second
#            leaf's uplink at 100% loss: every direction between the leaves is a dead link between
#            adapters that reach their leaf-mates (no adapter is at fault: none is suspected).
# Per run: wall time of mpirun, the rounds the report says it ran (bandwidth + retest), the elapsed
# time it reports, rank 0's peak RSS (GNU time), the pass/fail counts. The headline ratio is
# wall(bad) / wall(healthy) at the same E, measured in the same boot. Under TCG only ratios mean
# anything; absolute times are those of an emulated 2-core guest.
set -uo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
NAME=${RP_BENCH_NAME:-matrix-scale}
RAW=$ROOT/results/$NAME-raw
OUT=$ROOT/results/$NAME.md
EPS=${RP_BENCH_EPS:-"4 8"}
SCENARIOS=${RP_BENCH_SCENARIOS:-"healthy bridge loss"}
ARGS=${RP_BENCH_ARGS:-"-s 64K -n 200"}
VARIANTS=${RP_BENCH_VARIANTS:-"plain default"}

if [ "${1:-}" != --inside ]; then
	mkdir -p "$RAW"
	rm -f "$RAW"/*
	[ -x "$ROOT/build/rdmaprobe" ] || make -C "$ROOT" -j2 >/dev/null || exit 1
	max=0
	for e in $EPS; do [ "$e" -gt "$max" ] && max=$e; done
	RP_BENCH_EPS=$EPS RP_BENCH_SCENARIOS=$SCENARIOS RP_BENCH_ARGS=$ARGS RP_BENCH_MAX=$max RP_BENCH_VARIANTS=$VARIANTS \
		RP_BENCH_NAME=$NAME RP_BENCH_CMD="RP_BENCH_NAME=$NAME RP_BENCH_EPS=\"$EPS\" RP_BENCH_SCENARIOS=\"$SCENARIOS\" RP_BENCH_VARIANTS=\"$VARIANTS\" $0 $*" exec "$ROOT/scripts/testbed/vm.sh" run --results "$ROOT/results" \
		--timeout "${RP_BENCH_TIMEOUT:-3000}" -- "$ROOT/scripts/bench-matrix-scale.sh" --inside
fi

RP=$ROOT/build/rdmaprobe
FABRIC=$ROOT/scripts/testbed/fabric.sh
RANK=$RAW/rank.sh
log() { echo "bench: $*" >&2; }

# One rank: rank N is node N on rxeN, the binary RP_BENCH_BIN; rank 0 runs under GNU time for its
# peak RSS.
cat >"$RANK" <<'EOF'
#!/bin/sh
r=$OMPI_COMM_WORLD_RANK
if [ "$r" = 0 ]; then
	exec /usr/bin/time -f %M -o "$RP_BENCH_RSS" "$RP_BENCH_BIN" matrix --node node$r -d =rxe$r "$@"
fi
exec "$RP_BENCH_BIN" matrix --node node$r -d =rxe$r "$@"
EOF
chmod +x "$RANK"

fabric_for() {   # $1 scenario, $2 E: the fabric.sh spec
	local last=$(($2 - 1)) i list=
	for i in $(seq 0 $((last - 1))); do list=$list${list:+,}$i; done
	case $1 in
	bridge) echo "br0:$list br1:$last" ;;
	uplink)
		list=
		for i in $(seq 0 $(($2 / 2 - 1))); do list=$list${list:+,}$i; done
		local rest=
		for i in $(seq $(($2 / 2)) "$last"); do rest=$rest${rest:+,}$i; done
		echo "br0:$list br1:$rest spine:br0,br1"
		;;
	*) echo "br0:$list,$last" ;;
	esac
}

run_one() {   # $1 scenario, $2 E, $3 variant[@binary]
	local sc=$1 e=$2 v=${3%%@*} bin=$RP t0 t1 rc extra= tag
	case $3 in *@*) bin=${3#*@} ;; esac
	tag=$sc-$e-${v/:/}
	[ "$bin" = "$RP" ] || tag=$tag-$(basename "$(dirname "$bin")")
	case $v in sweep:*) extra="--sweep ${v#sweep:}" ;; plain) extra="--sweep off" ;; nohold) extra="--hold off" ;; esac
	bash "$FABRIC" down 2>/dev/null
	bash "$FABRIC" up "$(fabric_for "$sc" "$e")" >"$RAW/$tag.fabric" 2>&1 || { log "fabric up failed for $tag"; return 1; }
	[ "$sc" = loss ] && bash "$FABRIC" fault loss "rxe$((e - 1))" 100% >>"$RAW/$tag.fabric" 2>&1
	[ "$sc" = uplink ] && bash "$FABRIC" fault uplink br1 loss 100% >>"$RAW/$tag.fabric" 2>&1
	# shellcheck disable=SC2086 # ARGS: matrix options, split on spaces
	echo "mpirun -np $e rank.sh $ARGS $extra --json $tag.json  # $("$bin" --version | head -1)" >"$RAW/$tag.cmd"
	t0=$(date +%s.%N)
	RP_BENCH_BIN=$bin RP_BENCH_RSS=$RAW/$tag.rss mpirun --allow-run-as-root --oversubscribe -np "$e" "$RANK" $ARGS $extra \
		--json "$RAW/$tag.json" >"$RAW/$tag.stdout" 2>"$RAW/$tag.stderr"
	rc=$?
	t1=$(date +%s.%N)
	python3 - "$RAW/$tag.json" "$sc" "$e" "$rc" "$t0" "$t1" "$(cat "$RAW/$tag.rss" 2>/dev/null | tail -1)" "$3" >>"$RAW/rows" <<'PY'
import json, sys
f, sc, e, rc, t0, t1, rss, v = sys.argv[1:]
wall = float(t1) - float(t0)
try:
    d = json.load(open(f))
    m = d.get("matrix", {})
    pairs = d.get("pairs", [])
    ok = sum(1 for p in pairs if p.get("status") == "ok")
    rounds = "%s + %s retest" % (m.get("rounds"), m.get("retest_rounds"))
    if m.get("sweep"):
        rounds += " + %s sweep" % m["sweep"]["rounds"]
    row = (sc, int(e), wall, rounds, m.get("elapsed_s"), rss or "?", len(pairs), ok, rc, v)
except Exception as ex:
    row = (sc, int(e), wall, None, None, rss or "?", 0, 0, "%s (%s)" % (rc, ex), v)
print("\t".join(str(x) for x in row))
PY
	log "$tag: exit $rc, $(tail -1 "$RAW/rows")"
}

: >"$RAW/rows"
for e in $EPS; do
	for v in $VARIANTS; do
		for sc in $SCENARIOS; do run_one "$sc" "$e" "$v"; done
	done
done
bash "$FABRIC" down 2>/dev/null

python3 - "$RAW/rows" "$OUT" "${RP_BENCH_CMD:-scripts/bench-matrix-scale.sh}" "$ARGS" "$("$RP" --version | head -1)" <<'PY'
import sys, datetime
rows_f, out, cmd, args, ver = sys.argv[1:]
rows = [l.rstrip("\n").split("\t") for l in open(rows_f) if l.strip()]
wall = {(r[9], r[0], r[1]): float(r[2]) for r in rows}
L = ["# Matrix wall time with one bad endpoint (Soft-RoCE VM, one boot)", "",
     "Command: `%s` (inside: `mpirun -np E rank.sh %s`, rank N = node N on rxeN)." % (cmd.strip(), args),
     "Binary: `%s`. Measured %s UTC in a QEMU TCG guest (2 vCPUs); only ratios mean anything." %
     (ver, datetime.datetime.utcnow().strftime("%Y-%m-%d %H:%M")), "",
     "| variant | scenario | endpoints | wall s | rounds | reported elapsed s | rank 0 peak RSS KiB | pairs | ok | exit | wall / healthy (same variant) | wall / healthy plain |",
     "|---|---|---|---|---|---|---|---|---|---|---|---|"]
for r in rows:
    h = wall.get((r[9], "healthy", r[1]))
    hp = wall.get(("plain", "healthy", r[1]))
    ratio = "%.2f" % (float(r[2]) / h) if h else "-"
    ratio_p = "%.2f" % (float(r[2]) / hp) if hp else "-"
    L.append("| %s | %s | %s | %.1f | %s | %s | %s | %s | %s | %s | %s | %s |" % (r[9], r[0], r[1], float(r[2]), r[3], r[4], r[5], r[6], r[7], r[8], ratio, ratio_p))
L += ["", "Scenarios: `healthy` one bridge; `bridge` the last endpoint on a bridge of its own (fails fast);",
      "`loss` the last endpoint's link at 100% loss (every pair with it runs into its deadline);",
      "`uplink` two leaves joined by a spine, the second leaf's uplink at 100% loss (dead links between",
      "adapters that reach their leaf-mates).",
      "Variants: `plain` (`--sweep off`: lock-step rounds, then retest rounds), `sweep:W` (`--sweep W`:",
      "reachability first, the unreachable directions left out of the bandwidth rounds; lib/matrix/mx_sweep.h),",
      "`default` (no `--sweep`: since 48926c9 the sweep at width 64; since --hold, with it: the bandwidth on",
      "the probes' connections), `nohold` (`--hold off`: the default sweep, every bandwidth direction on a new connection).",
      "The headline figure of issue 12 is `wall / healthy` for `loss` (goal: at most 1.2); measured in 2026-11 at",
      "5.65 for 8 endpoints with the plain scheduler."]
open(out, "w").write("\n".join(L) + "\n")
print("\n".join(L))
PY
