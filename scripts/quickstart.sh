#!/usr/bin/env bash
# quickstart.sh: the README's first command. Installs what rdmaprobe needs (Debian/Ubuntu; root or
# sudo), builds it, and runs it: on this machine's RDMA adapters when it has any, otherwise inside
# the Soft-RoCE test bed VM (rxe0..rxe2 on one switch, rxe3 on another), so you see real output.
#   scripts/quickstart.sh
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

# Run one rdmaprobe command, showing what it prints; its exit status is the script's.
try() {
	echo "== rdmaprobe $*"
	build/rdmaprobe "$@"
}

# Inside the VM (or on hardware): what a newcomer should see. A failing pair is a finding, not a
# failed set-up: loopback's exit 1 (some pair failed) is reported and the quick start still succeeds;
# 2 (usage) and 3 (environment) fail it.
show() {
	local rc=0
	try devices || return
	echo
	try loopback --no-self -n 200 || rc=$?
	if [ $rc -eq 1 ]; then
		echo "(rdmaprobe found failing pairs: that is its verdict above, not a set-up error)"
		rc=0
	fi
	return $rc
}
if [ "${1:-}" = --show ]; then
	show
	exit
fi

scripts/install-deps.sh
make -j"$(nproc)"
echo
if ibv_devices 2>/dev/null | awk 'NR > 2' | grep -q .; then
	echo "RDMA adapters found: running on the hardware."
	show
else
	echo "No RDMA adapter here: running on 4 Soft-RoCE devices in a VM (QEMU, about a minute;"
	echo "rxe0, rxe1, rxe2 share one switch, rxe3 sits on another, so every pair with rxe3 must fail)."
	scripts/testbed/vm.sh run --fabric 'br0:0,1,2 br1:3' -- scripts/quickstart.sh --show
fi
