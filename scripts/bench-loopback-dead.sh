#!/usr/bin/env bash
# bench-loopback-dead.sh: loopback over 4 adapters with one dead, in ONE VM boot (issue 29's
# "loopback over 4 adapters with one dead: <= 1.2 x healthy + one --timeout").
# A benchmark, not a test: it asserts nothing, it writes numbers. The verdict of the same runs is
# tested by tests/e2e/43-loopback-dead-adapter.sh; the `--sweep off` run (one direction at a time,
# each to its deadline, then its retest: ~85 s under TCG) is here only, as the figure to compare.
#
#   scripts/bench-loopback-dead.sh         (host) boots the VM and runs itself inside; writes
#                                          results/NAME.md and results/NAME-raw/* (git-ignored)
#   RP_BENCH_NAME=loopback-dead            the file names
#   RP_BENCH_VARIANTS="default plain"      default (the sweep), plain (--sweep off)
#
# Runs: healthy (rxe0..rxe3 on one bridge), then rxe3's link at 100% netem loss, per variant:
#   rdmaprobe loopback -d rxe0,rxe1,rxe2,rxe3 --no-self -s 4K -n 200 --timeout 5 --outlier 0 --interval-drop 0
# Under TCG only ratios mean anything; absolute times are those of an emulated 2-core guest.
set -uo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
NAME=${RP_BENCH_NAME:-loopback-dead}
RAW=$ROOT/results/$NAME-raw
OUT=$ROOT/results/$NAME.md
VARIANTS=${RP_BENCH_VARIANTS:-"default plain"}
ARGS="-d rxe0,rxe1,rxe2,rxe3 --no-self -s 4K -n 200 --timeout 5 --outlier 0 --interval-drop 0"

if [ "${1:-}" != --inside ]; then
	mkdir -p "$RAW"
	rm -f "$RAW"/*
	[ -x "$ROOT/build/rdmaprobe" ] || make -C "$ROOT" -j2 >/dev/null || exit 1
	RP_BENCH_NAME=$NAME RP_BENCH_VARIANTS=$VARIANTS RP_BENCH_WHEN=$(date -u '+%Y-%m-%d %H:%M') \
		RP_BENCH_CMD="RP_BENCH_NAME=$NAME RP_BENCH_VARIANTS=\"$VARIANTS\" $0 $*" exec "$ROOT/scripts/testbed/vm.sh" run \
		--results "$ROOT/results" --timeout "${RP_BENCH_TIMEOUT:-900}" -- "$ROOT/scripts/bench-loopback-dead.sh" --inside
fi

RP=$ROOT/build/rdmaprobe
FABRIC=$ROOT/scripts/testbed/fabric.sh
log() { echo "bench: $*" >&2; }

run_one() {   # $1 tag, $2 extra options: one row of $RAW/rows (tag, wall s, exit, the sweep's line)
	local t0 t1 rc
	echo "rdmaprobe loopback $ARGS $2 --json $1.json  # $("$RP" --version | head -1)" >"$RAW/$1.cmd"
	t0=$(date +%s.%N)
	# shellcheck disable=SC2086 # ARGS and $2: options, split on spaces
	"$RP" loopback $ARGS $2 --json "$RAW/$1.json" >"$RAW/$1.stdout" 2>"$RAW/$1.stderr"
	rc=$?
	t1=$(date +%s.%N)
	printf '%s\t%s\t%s\t%s\n' "$1" "$(awk "BEGIN { printf \"%.1f\", $t1 - $t0 }")" "$rc" \
		"$(grep '^\[sweep\]' "$RAW/$1.stderr" | tail -1)" >>"$RAW/rows"
	log "$1: exit $rc, $(tail -1 "$RAW/rows")"
}

: >"$RAW/rows"
bash "$FABRIC" down 2>/dev/null
bash "$FABRIC" up "br0:0,1,2,3" >"$RAW/fabric" 2>&1 || { log "fabric up failed"; exit 1; }
run_one healthy ""
bash "$FABRIC" fault loss rxe3 100% >>"$RAW/fabric" 2>&1
for v in $VARIANTS; do
	case $v in plain) run_one dead-plain "--sweep off" ;; *) run_one dead-default "" ;; esac
done
bash "$FABRIC" down 2>/dev/null

python3 - "$RAW/rows" "$OUT" "${RP_BENCH_CMD:-scripts/bench-loopback-dead.sh}" "$ARGS" "$("$RP" --version | head -1)" \
	"${RP_BENCH_WHEN:-?}" <<'PY'
import sys
rows_f, out, cmd, args, ver, when = sys.argv[1:]
rows = [l.rstrip("\n").split("\t") for l in open(rows_f) if l.strip()]
wall = {r[0]: float(r[1]) for r in rows}
h = wall.get("healthy")
L = ["# Loopback over 4 adapters, one dead (Soft-RoCE VM, one boot)", "",
     "Command: `%s` (inside: `rdmaprobe loopback %s [--sweep off]`)." % (cmd.strip(), args),
     "Binary: `%s`. Measured %s UTC (the host's clock at the boot) in a QEMU TCG guest; only ratios mean anything." %
     (ver, when), "",
     "| run | wall s | exit | wall / healthy | the sweep's line |", "|---|---|---|---|---|"]
for r in rows:
    L.append("| %s | %s | %s | %s | %s |" % (r[0], r[1], r[2], "%.2f" % (float(r[1]) / h) if h else "-",
                                             (r[3] if len(r) > 3 else "").replace("|", "/")))
L += ["", "`healthy`: rxe0..rxe3 on one bridge; `dead-*`: rxe3's link at 100% netem loss. `default`: the",
      "reachability sweep (every direction probed at once, the failures probed again at once);",
      "`plain`: `--sweep off` (one direction at a time, each to its deadline, then its retest).",
      "Issue 29's target for `dead-default`: at most 1.2 x healthy + one `--timeout` (5 s)."]
if h:
    L.append("That is %.1f s here." % (1.2 * h + 5))
open(out, "w").write("\n".join(L) + "\n")
print("\n".join(L))
PY
