#!/usr/bin/env bash
# quickstart.sh: the README's first command. Installs what rdmaprobe needs (Debian/Ubuntu; root or
# sudo), builds it, and runs it: on this machine's RDMA adapters when it has any, otherwise inside
# the Soft-RoCE test bed VM (rxe0..rxe2 on one switch, rxe3 on another), so you see real output.
#   scripts/quickstart.sh
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

# Run one rdmaprobe command; one that this version does not have yet is a note, not a failure.
try() {
	local rc=0 err
	echo "== rdmaprobe $*"
	err=$(mktemp)
	build/rdmaprobe "$@" 2>"$err" || rc=$?
	if [ $rc -eq 2 ] && grep -q "not implemented" "$err"; then
		echo "(rdmaprobe $1 is not implemented yet in this version)"
		rc=0
	else
		cat "$err" >&2
	fi
	rm -f "$err"
	echo
	return $rc
}

# Inside the VM (or on hardware): what a newcomer should see.
show() {
	try devices && try loopback
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
	echo "rxe0, rxe1, rxe2 share one switch, rxe3 sits on another)."
	scripts/testbed/vm.sh run --fabric 'br0:0,1,2 br1:3' -- scripts/quickstart.sh --show
fi
