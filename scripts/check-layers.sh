#!/bin/sh
# check-layers.sh: lib/'s folders depend one way (doc/architecture.md draws it). A file in lib/F/ may
# include its own folder's headers and those of the folders before F in LAYERS, never one after F:
# a module never calls the layers built on it. Run by `make check`; prints each wrong arrow, exits 1.
set -eu
LAYERS="base discover health nccl mem oob engine verdict session job matrix plan sim report compare"
cd "$(dirname "$0")/.."

rank() {
	i=0
	for l in $LAYERS; do
		[ "$l" = "$1" ] && { echo $i; return; }
		i=$((i + 1))
	done
	echo -1
}

bad=0
for d in lib/*/; do
	f=$(basename "$d")
	r=$(rank "$f")
	if [ "$r" -lt 0 ]; then
		echo "check-layers: lib/$f/ is in no layer (scripts/check-layers.sh LAYERS)" >&2
		bad=1
		continue
	fi
	for src in "$d"*.c "$d"*.h; do
		[ -e "$src" ] || continue
		for inc in $(sed -n 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*"\([^"]*\)".*/\1/p' "$src"); do
			case $inc in
			*/*) to=${inc%%/*} ;;
			*) [ -e "lib/$inc" ] && { echo "check-layers: $src includes \"$inc\": name its folder" >&2; bad=1; }
			   continue ;;
			esac
			t=$(rank "$to")
			[ "$t" -lt 0 ] && continue
			if [ "$t" -gt "$r" ]; then
				echo "check-layers: $src ($f) includes $inc: $to is built on $f, not under it" >&2
				bad=1
			fi
		done
	done
done
for f in lib/*.c lib/*.h; do
	[ -e "$f" ] && { echo "check-layers: $f is in no folder" >&2; bad=1; }
done
[ $bad -eq 0 ] && echo "check-layers: lib/ depends one way ($(echo $LAYERS | sed 's/ / <- /g'))"
exit $bad
