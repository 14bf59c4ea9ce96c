#!/usr/bin/env bash
# bench-reports-scale.sh: the reports an operator reads at 1,024 x 8 (issue 30), over the SIMULATED
# fabric of scripts/bench-sim-scale.sh (NDR-like, --pattern rail, default settings): one run with 1%
# random dead links, one with one dead adapter. A benchmark, not a test: it asserts nothing.
#
#   scripts/bench-reports-scale.sh      writes results/reports-scale.md and results/reports-scale-1024x8.png
#   RP_BIN=build/rdmaprobe               the binary measured
#   RP_NODES=1024                        nodes (8 adapters each)
# Per run: stdout's lines, the reports' sizes, wall and peak RSS; then `diff` of each default (notable)
# JSON with itself and of the two with each other (wall, RSS); the 1% page rendered in headless
# Chromium (the screenshot, and the canvas's drawn failure count from the DOM).
set -uo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
RP=${RP_BIN:-$ROOT/build/rdmaprobe}
N=${RP_NODES:-1024}
OUT=$ROOT/results/reports-scale.md
PNG=$ROOT/results/reports-scale-${N}x8.png
S=$(mktemp -d /tmp/rp-reports-scale.XXXXXX)
[ -n "${RP_KEEP:-}" ] || trap 'rm -rf "$S"' EXIT   # RP_KEEP=1: keep the reports (their directory on stderr)
echo "scratch: $S" >&2

model() {   # the extra line
	printf '# bench-reports-scale.sh: NDR-like\nnodes %s\nadapters 8\nrate 400\nbandwidth 390\nlatency 2us\n' "$N"
	printf 'setup 15ms\nround-overhead 5ms\n%s\n' "$1"
}
model "random-dead 0.01 12" >"$S/dead1.model"
model "dead-endpoint node$(printf '%04d' $((N / 2)))/mlx5_3" >"$S/deadep.model"

timed() {   # name cmd...: runs it in $S, its time line in $S/name.time
	local n=$1
	shift
	( cd "$S" && /usr/bin/time -o "$n.time.raw" -f '%e s wall, %U s user + %S s sys, %M KiB peak RSS' nice "$@" )
	local rc=$?
	tail -1 "$S/$n.time.raw" >"$S/$n.time"
	return $rc
}

{
	echo "# Reports at ${N} x 8 (issue 30): text, JUnit, HTML, diff"
	echo
	echo "Binary: \`$("$RP" --version)\`; host: $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg) at the start"
	echo "(a shared host: wall times move with the other jobs; the CPU-bound figures are the RSS and sizes)."
	echo "Written by \`scripts/bench-reports-scale.sh\`. Fabric: \`matrix --transport sim\`, NDR-like model of"
	echo "\`scripts/bench-sim-scale.sh\` (rate 400, bandwidth 390, set-up 15 ms, round overhead 5 ms), --pattern rail,"
	echo "default settings (the sweep, --hold auto, --retest 1, --list-pairs auto: notable at this size)."
	echo
	echo "| run | command | stdout lines | JSON | CSV | HTML | JUnit (test cases) | wall, peak RSS |"
	echo "|---|---|---|---|---|---|---|---|"
} >"$OUT"
for m in deadep dead1; do
	cmd="matrix --transport sim --fabric-model $m.model --pattern rail --json $m.json --csv $m.csv --html $m.html --junit $m.xml"
	timed "$m" "$RP" $cmd >"$S/$m.out" 2>"$S/$m.err"
	lines=$(wc -l <"$S/$m.out")
	cases=$(grep -c '<testcase ' "$S/$m.xml" 2>/dev/null || echo 0)
	printf '| %s | `rdmaprobe %s` | %s | %s | %s | %s | %s (%s) | %s |\n' "$m" "$cmd" "$lines" "$(stat -c %s "$S/$m.json")" \
		"$(stat -c %s "$S/$m.csv")" "$(stat -c %s "$S/$m.html")" "$(stat -c %s "$S/$m.xml")" "$cases" \
		"$(cat "$S/$m.time")" >>"$OUT"
	cp "$S/$m.out" "$S/$m.stdout.txt"
done
{
	echo
	echo "Sizes in bytes. deadep: \`dead-endpoint node$(printf '%04d' $((N / 2)))/mlx5_3\`; dead1: \`random-dead 0.01 12\`."
	echo
	echo "## diff of the default (notable) reports"
	echo
	echo "| command | exit | wall, peak RSS |"
	echo "|---|---|---|"
} >>"$OUT"
for pair in "dead1 dead1" "deadep deadep" "dead1 deadep"; do
	set -- $pair
	timed "diff-$1-$2" "$RP" diff "$1.json" "$2.json" >"$S/diff-$1-$2.out" 2>&1
	rc=$?
	printf '| `rdmaprobe diff %s.json %s.json` | %s | %s |\n' "$1" "$2" "$rc" "$(cat "$S/diff-$1-$2.time")" >>"$OUT"
done
if command -v chromium >/dev/null; then
	chromium --headless --no-sandbox --disable-gpu --disable-quic --no-first-run --disable-background-networking \
		--disable-component-update --disable-sync --user-data-dir="$S/profile" --window-size=1400,1500 \
		--screenshot="$PNG" "file://$S/dead1.html" >/dev/null 2>&1
	timeout 300 chromium --headless --no-sandbox --disable-gpu --disable-quic --no-first-run --disable-background-networking \
		--disable-component-update --disable-sync --user-data-dir="$S/profile" --dump-dom "file://$S/dead1.html" \
		2>/dev/null >"$S/dead1.dom"
	{
		echo
		echo "## The 1% page in headless Chromium"
		echo
		echo "Screenshot: \`$(basename "$PNG")\` (1400 x 1500). From the DOM after its script ran:"
		echo "canvas \`$(grep -o '<canvas id="node-heatmap"[^>]*>' "$S/dead1.dom" | head -1)\`; heat note:"
		echo "\"$(grep -o '<p class="hint" id="heat-note">[^<]*' "$S/dead1.dom" | sed 's/.*">//')\""
	} >>"$OUT"
fi
{
	echo
	echo "## stdout of the two runs"
	for m in deadep dead1; do
		echo
		echo "### $m"
		echo
		echo '```'
		cut -c1-400 "$S/$m.stdout.txt"
		echo '```'
	done
} >>"$OUT"
echo "wrote $OUT" >&2
