#!/bin/sh
# deb-check.sh: build the Debian package from this tree and prove it installs and runs.
#
#   1. copy the tree (tracked and untracked files git does not ignore) to a scratch directory, so the
#      build starts clean and dpkg-buildpackage's outputs (../*.deb) stay out of the worktree;
#   2. dpkg-buildpackage -us -uc -b (DEB_BUILD_OPTIONS=nocheck: 'make check' runs on its own);
#   3. the package's Depends name the host's rdma-core libraries (dh_shlibdeps), and dpkg on this host
#      would accept them (dpkg --dry-run -i);
#   4. dpkg --root installs it into an empty scratch root (dependencies forced: that root has no
#      libc), then the installed binary runs (--version, devices), man renders its page, and bash
#      loads its completion.
# Exit 0 when all of it holds; the build log is shown on failure. RP_DEB_KEEP=1 keeps the scratch dir.
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d /tmp/rp-deb.XXXXXX)
[ "${RP_DEB_KEEP:-0}" = 1 ] || trap 'rm -rf "$work"' EXIT
say() { printf 'deb-check: %s\n' "$*"; }
die() { printf 'deb-check: FAILED: %s\n' "$*" >&2; exit 1; }

for t in dpkg-buildpackage dh dpkg-deb; do
	command -v "$t" >/dev/null 2>&1 || die "$t is missing (scripts/install-deps.sh installs debhelper and dpkg-dev)"
done

mkdir "$work/src"
(cd "$top" && git ls-files -co --exclude-standard -z | tar -c --null -T -) | tar -x -C "$work/src"
say "building in $work/src"
if ! (cd "$work/src" && DEB_BUILD_OPTIONS="nocheck parallel=2" dpkg-buildpackage -us -uc -b) >"$work/build.log" 2>&1; then
	tail -40 "$work/build.log" >&2
	die "dpkg-buildpackage"
fi
deb=$(ls "$work"/rdmaprobe_*.deb)
say "built $(basename "$deb")"

depends=$(dpkg-deb --field "$deb" Depends)
say "Depends: $depends"
for lib in libibverbs1 librdmacm1 libjansson4 libc6; do
	printf '%s\n' "$depends" | grep -q "$lib" || die "Depends lacks $lib (dh_shlibdeps did not see it)"
done
dpkg --dry-run -i "$deb" >"$work/dry-run.log" 2>&1 || { cat "$work/dry-run.log" >&2; die "dpkg --dry-run -i on this host"; }

contents=$(dpkg-deb --contents "$deb" | awk '{print $NF}')
for f in ./usr/bin/rdmaprobe ./usr/lib/rdmaprobe/rdmaprobe-mpi.so ./usr/share/man/man1/rdmaprobe.1.gz ./usr/share/bash-completion/completions/rdmaprobe ./usr/share/rdmaprobe/rdmaprobe.nhc; do
	printf '%s\n' "$contents" | grep -qx "$f" || die "the package lacks $f"
done

root="$work/root"
mkdir -p "$root/var/lib/dpkg/info" "$root/var/lib/dpkg/updates"
: >"$root/var/lib/dpkg/status"
: >"$root/var/lib/dpkg/available"
dpkg --root="$root" --log=/dev/null --force-depends --force-not-root -i "$deb" >"$work/install.log" 2>&1 ||
	{ cat "$work/install.log" >&2; die "dpkg --root -i"; }
status=$(dpkg --root="$root" -s rdmaprobe | sed -n 's/^Status: //p')
[ "$status" = "install ok installed" ] || die "dpkg --root says '$status'"
say "installed into $root: $(dpkg --root="$root" -L rdmaprobe | grep -c '/usr/') paths"

"$root/usr/bin/rdmaprobe" --version | grep -q '^rdmaprobe ' || die "rdmaprobe --version"
say "$("$root/usr/bin/rdmaprobe" --version)"
rc=0
"$root/usr/bin/rdmaprobe" devices >"$work/devices.out" 2>&1 || rc=$?
[ "$rc" -eq 0 ] || [ "$rc" -eq 3 ] || { cat "$work/devices.out" >&2; die "rdmaprobe devices exited $rc"; }
say "rdmaprobe devices: exit $rc, $(head -1 "$work/devices.out")"
if command -v man >/dev/null 2>&1; then
	LC_ALL=C MANWIDTH=100 man -l "$root/usr/share/man/man1/rdmaprobe.1.gz" 2>&1 | grep -q 'rdmaprobe diff' ||
		die "man -l on the installed page"
fi
bash -c ". '$root/usr/share/bash-completion/completions/rdmaprobe' && complete -p rdmaprobe" >/dev/null ||
	die "bash cannot load the installed completion"
say "ok"
