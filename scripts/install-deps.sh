#!/usr/bin/env bash
# Install what rdmaprobe needs to build and to run its tests on Debian/Ubuntu (apt-get), as root.
#   scripts/install-deps.sh            build + unit tests + the Soft-RoCE VM test bed
#   scripts/install-deps.sh --build    only what `make` needs
# RHEL/Rocky names are in the README. libibverbs/librdmacm come from the host's rdma-core and are
# linked dynamically: the user-space providers must match the host's kernel.
# munge, slurmctld, slurmd, slurm-client: the real Slurm that e2e 50 starts inside the VM (rdmaprobe
# check --slurm-drain); rpmlint, rpm: make rpm-check lints rpm/rdmaprobe.spec; prometheus: promtool, which
# checks every --prom page in make check (tests/prom_check.py).
set -euo pipefail

build_pkgs=(build-essential pkg-config libibverbs-dev librdmacm-dev rdma-core ibverbs-providers
	libjansson-dev libcmocka-dev)
optional_pkgs=(libopenmpi-dev openmpi-bin)
test_pkgs=(ibverbs-utils perftest qemu-system-x86 busybox-static iproute2 kmod cpio gzip jq util-linux libxml2-utils python3 python3-prometheus-client procps clang debhelper dpkg-dev groff-base
	munge slurmctld slurmd slurm-client rpmlint rpm
	chromium prometheus)

want=("${build_pkgs[@]}" "${optional_pkgs[@]}")
[ "${1:-}" = "--build" ] || want+=("${test_pkgs[@]}")

missing=()
for p in "${want[@]}"; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
	echo "install-deps: everything is installed"
	exit 0
fi
if [ "$(id -u)" -ne 0 ]; then
	SUDO=sudo
else
	SUDO=
fi
echo "install-deps: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -q
$SUDO apt-get install -y -q --no-install-recommends "${missing[@]}"
