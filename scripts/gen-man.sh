#!/bin/sh
# gen-man.sh BIN TEMPLATE VERSION DATE: write rdmaprobe(1) to stdout.
#
# The prose comes from TEMPLATE (doc/rdmaprobe.1.in); the line @COMMANDS@ becomes one section per
# command that BIN lists (rdmaprobe --commands), each with the synopsis and options BIN prints from
# its own option table (rdmaprobe COMMAND --help=man). So the page lists exactly what --help lists.
set -eu
bin=$1 template=$2 version=$3 date=$4

commands=$("$bin" --commands </dev/null)
[ -n "$commands" ] || { echo "gen-man.sh: $bin --commands printed nothing" >&2; exit 1; }

while IFS= read -r line; do
	if [ "$line" != "@COMMANDS@" ]; then
		printf '%s\n' "$line" | sed -e "s|@VERSION@|$version|g" -e "s|@DATE@|$date|g"
		continue
	fi
	printf '%s\n' "$commands" | while IFS='	' read -r name summary; do
		printf '.SS %s\n' "$name"
		# the summary as roff text: backslashes and dashes escaped
		printf '%s\n' "$summary" | sed -e 's/\\/\\e/g' -e 's/-/\\-/g'
		"$bin" "$name" --help=man </dev/null
	done
done <"$template"
