#!/usr/bin/env bash
# html-scale.sh [OUTDIR]: the HTML report at 4, 64 and 1,024 nodes x 8 adapters, from synthetic runs
# (build/html-synth: nothing measured, labelled SYNTHETIC on the page): writes each page, a
# screenshot of it in headless Chromium, and the page's own load time (the performance.now() at which
# its script finished, read back with --dump-dom), then a table of sizes and times in
# OUTDIR/html-scale.md (default results/). Runs Chromium 6 times: CPU heavy, run it by hand.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
out=${1:-$root/results}
synth=$root/build/html-synth
[ -x "$synth" ] || { echo "html-scale.sh: $synth is missing (run make)" >&2; exit 2; }
browser=$(command -v chromium || command -v chromium-browser || true)
[ -n "$browser" ] || { echo "html-scale.sh: chromium is not installed" >&2; exit 2; }
mkdir -p "$out"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
chrome() {
	timeout 300 "$browser" --headless --no-sandbox --disable-gpu --disable-quic --no-first-run \
		--disable-background-networking --disable-component-update --disable-sync \
		--user-data-dir="$tmp/profile-$RANDOM" "$@" 2>/dev/null
}
{
	echo "| nodes x adapters | pairs | page bytes | build (C) s | load in Chromium, ms | screenshot |"
	echo "|---|---|---|---|---|---|"
} >"$tmp/table"
for n in 4 64 1024; do
	page=$out/html-synth-$n-x8.html
	line=$("$synth" "$n" 8 "$page")
	pairs=$(sed -n 's/.*pairs=\([0-9]*\).*/\1/p' <<<"$line")
	bytes=$(sed -n 's/.*bytes=\([0-9]*\).*/\1/p' <<<"$line")
	build=$(sed -n 's/.*build_s=\([0-9.]*\).*/\1/p' <<<"$line")
	h=$((n <= 4 ? 1800 : n <= 64 ? 1700 : 1900))
	chrome --screenshot="$out/html-synth-$n-x8.png" --window-size=1400,$h "file://$page" >/dev/null
	ms=$(chrome --dump-dom "file://$page" | grep -o 'data-load-ms="[0-9]*"' | head -1 | tr -dc 0-9)
	[ -n "$ms" ] || { echo "html-scale.sh: the page's script did not run for $n nodes" >&2; exit 1; }
	echo "| $n x 8 | $pairs | $bytes | $build | $ms | html-synth-$n-x8.png |" >>"$tmp/table"
	echo "$n x 8: $pairs pairs, $bytes bytes, built in $build s, ready in $ms ms"
done
{
	echo "# The HTML report at scale (synthetic runs)"
	echo
	echo "Produced by \`scripts/html-scale.sh\` on $(date -u +%Y-%m-%d) ($(nproc) CPUs shared with other jobs,"
	echo "$("$browser" --version 2>/dev/null | head -1)). The runs are synthetic (\`build/html-synth N 8 OUT\`,"
	echo "tests/mx_view.c \`mx_synth_build\`: 400 Gb/s ports, node (7N+4)/9+1 mlx5_3 dead, node N/3+1 mlx5_5 at"
	echo "55%, one flaky pair, one interval drop) and say so in the page's title and banner. Up to 300,000"
	echo "pairs every inter-node pair is measured; beyond, one adapter pair per ordered node pair."
	echo "\"load\" is the page's own \`performance.now()\` when its script finished (navigation start to"
	echo "heatmap drawn), read back from \`data-load-ms\` with \`chromium --headless --dump-dom\`."
	echo
	cat "$tmp/table"
	echo
	echo "Size bound (lib/report/report_html.h): the page grows with the node pairs, not with the adapter pairs:"
	echo "2 bytes a node pair in base64 (2.67 N^2: 2.8 MB at 1,024 nodes), the problem node pairs (4 numbers"
	echo "each, at most RP_HTML_CELLS_MAX = 65,536 of them: 1.3 MB), at most RP_HTML_DETAIL_MAX = 1 Mi adapter pairs embedded for the drill-down (1.4 MB), at"
	echo "most RP_HTML_PROBLEM_MAX = 2,000 failed or warned pairs with their reasons (about 0.6 MB), the"
	echo "failures and warnings lists capped at RP_HTML_LIST_MAX = 500 entries each, and the names (about 25"
	echo "bytes an endpoint). At 1,024 nodes x 8 adapters that is at most about 7 MB, whether the run"
	echo "measured 1 M pairs (above) or all 67 M. The endpoint tables (one cell per pair) are written only"
	echo "up to RP_HTML_GRID_MAX = 64 endpoints; the node heatmap up to RP_HTML_HEATMAP_NODES = 2,048 nodes."
	echo
	echo "The .html pages themselves are not kept in git (regenerate them with the command above)."
} >"$out/html-scale.md"
rm -f "$out"/html-synth-*-x8.html
cat "$out/html-scale.md"
