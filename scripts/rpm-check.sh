#!/bin/sh
# rpm-check.sh: lint rpm/rdmaprobe.spec offline with rpmlint (Debian's package) and expand it with
# rpmspec -P; the spec's Version must be the tree's VERSION. Any rpmlint error or unfiltered warning fails.
set -eu
spec=rpm/rdmaprobe.spec
for t in rpmlint rpmspec; do
	command -v "$t" >/dev/null || { echo "rpm-check: $t not installed (scripts/install-deps.sh: rpmlint rpm)" >&2; exit 1; }
done
out=$(rpmlint -r rpm/rdmaprobe.rpmlintrc "$spec" 2>&1) || { echo "$out"; echo "rpm-check: rpmlint failed" >&2; exit 1; }
echo "$out" | grep -q " 0 errors, 0 warnings" || { echo "$out"; echo "rpm-check: rpmlint found problems" >&2; exit 1; }
rpmspec -P "$spec" >/dev/null || { echo "rpm-check: rpmspec -P $spec failed" >&2; exit 1; }
v=$(rpmspec -q --srpm --qf '%{VERSION}\n' "$spec" 2>/dev/null | head -n 1)
[ "$v" = "$(cat VERSION)" ] || { echo "rpm-check: $spec has Version $v, the tree is $(cat VERSION)" >&2; exit 1; }
echo "rpm-check: $spec lints clean (rpmlint $(rpmlint --version 2>/dev/null | head -n 1)), Version $v"
