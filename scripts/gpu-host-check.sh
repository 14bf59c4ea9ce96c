#!/usr/bin/env bash
# gpu-host-check.sh: the CUDA backend on a real GPU host (an NVIDIA GPU; no RDMA adapter or network
# needed). Builds rdmaprobe, then build/gpucheck (scripts/gpucheck.c) allocates on the GPU through
# rp_mem_cuda_ops, exports a dma-buf (cuMemGetHandleForAddressRange), fills and verifies a pattern
# through the ops, and reports the GPU's PCI path; then `rdmaprobe devices` and the unit tests run.
#
#   scripts/gpu-host-check.sh [DEVICE [SIZE]]      (defaults: 0 64M)
#
# Everything goes to results/gpu-host-<UTC time>.txt, a summary to the .md beside it
# (RP_RESULTS_DIR overrides results/). Exit 0 all passed, 1 a check failed, 3 no GPU, driver or CUDA
# toolkit: that is found out first, in seconds, before anything is built.
set -u
cd "$(dirname "$0")/.." || exit 3

device=${1:-0}
size=${2:-64M}
stamp=$(date -u +%Y%m%dT%H%M%SZ)
dir=${RP_RESULTS_DIR:-results}
mkdir -p "$dir" || exit 3
txt=$dir/gpu-host-$stamp.txt
md=$dir/gpu-host-$stamp.md
# One line per step, "STEP name | result | detail"; the summary table is built from these lines.
step() { echo "STEP $1 | $2 | ${3:-}"; }
section() { echo; echo "### $*"; }

# Stop early where no GPU can work, with the reason.
precheck() {
	section "host"
	echo "date: $(date -u '+%Y-%m-%d %H:%M:%S UTC')"
	echo "host: $(uname -n)  kernel: $(uname -r)  arch: $(uname -m)"
	echo "rev: $(git rev-parse --short HEAD 2>/dev/null || echo unknown)$(git diff --quiet 2>/dev/null || echo ' (dirty)')"
	section "NVIDIA driver"
	if [ ! -e /proc/driver/nvidia/version ]; then
		step "nvidia driver" FAIL "no /proc/driver/nvidia/version: the NVIDIA kernel driver is not loaded (no GPU, or 'modprobe nvidia')"
		return 3
	fi
	cat /proc/driver/nvidia/version
	if ! ls /dev/nvidia[0-9]* >/dev/null 2>&1; then
		step "nvidia driver" FAIL "the driver is loaded but there is no /dev/nvidiaN: no GPU is visible to this host or container"
		return 3
	fi
	if command -v nvidia-smi >/dev/null; then
		timeout 30 nvidia-smi -L
		timeout 30 nvidia-smi --query-gpu=index,name,pci.bus_id,driver_version,memory.total --format=csv
	else
		echo "(no nvidia-smi)"
	fi
	echo "kernel module license: $(modinfo -F license nvidia 2>/dev/null || echo unknown)" \
		"(\"Dual MIT/GPL\" = open GPU kernel modules, which dma-buf export needs)"
	echo "nvidia-peermem: $( [ -e /sys/module/nvidia_peermem ] && echo loaded || echo 'not loaded')"
	step "nvidia driver" ok "$(ls /dev/nvidia[0-9]* | wc -l) GPU device node(s)"
	section "build"
	make features
	if ! make features | grep -q '^cuda=yes'; then
		step "cuda toolkit" FAIL "make found no CUDA toolkit (nvcc on PATH or CUDA_HOME=/usr/local/cuda)"
		return 3
	fi
	return 0
}

run_checks() {
	local rc=0 jobs
	jobs=$(nproc 2>/dev/null || echo 2)
	if make -j"$jobs" WERROR=1 all build/gpucheck; then
		step "build" ok "make WERROR=1 all build/gpucheck"
	else
		step "build" FAIL "make failed (see above)"
		return 1
	fi
	build/rdmaprobe --version

	section "gpucheck $device $size"
	timeout 300 build/gpucheck "$device" "$size" | tee "$dir/.gpucheck.$$"
	local g=${PIPESTATUS[0]}
	while IFS= read -r line; do
		case $line in
		alloc*|dmabuf_export*|pattern_*|registration*|gpu_pci*|dmabuf_supported_attr*) ;;
		*) continue ;;
		esac
		step "gpucheck ${line%%:*}" "$(echo "${line#*: }" | cut -d' ' -f1)" "$(echo "${line#*: }" | cut -s -d' ' -f2-)"
	done <"$dir/.gpucheck.$$"
	rm -f "$dir/.gpucheck.$$"
	if [ "$g" -eq 0 ]; then step "gpucheck" ok; else step "gpucheck" FAIL "exit $g"; rc=1; fi

	section "rdmaprobe devices"
	timeout 60 build/rdmaprobe devices
	local d=$?
	# No RDMA adapter is expected on a GPU-only host: exit 3 there is the right answer, not a failure.
	step "rdmaprobe devices" "exit=$d" "0 adapters found, 3 none (expected without an RDMA adapter)"

	section "PCI topology"
	command -v nvidia-smi >/dev/null && timeout 30 nvidia-smi topo -m

	section "make check"
	if timeout 600 make -j"$jobs" check; then
		step "make check" ok "unit tests, real CUDA runtime in test_gpudirect"
	else
		step "make check" FAIL "see above"
		rc=1
	fi
	return $rc
}

main() {
	precheck || return $?
	run_checks
}

main 2>&1 | tee "$txt"
status=${PIPESTATUS[0]}
case $status in 0) verdict=PASS ;; 3) verdict="NO GPU / NO CUDA" ;; *) verdict=FAIL ;; esac
{
	echo "# GPU host check, $stamp"
	echo
	echo "Host $(uname -n), kernel $(uname -r); device $device, size $size: $verdict (exit $status)."
	echo "Full log: $(basename "$txt")"
	echo
	echo "| step | result | detail |"
	echo "|---|---|---|"
	sed -n 's/^STEP \(.*\)$/| \1 |/p' "$txt"
	echo
	facts=$(grep -E '^(gpu|gpu_name|gpu_pci|gpu_pci_path|cuda_devices|alloc|dmabuf_[a-z_]*|peermem_loaded|result):' "$txt")
	[ -n "$facts" ] && printf '```\n%s\n```\n' "$facts"
} >"$md"
echo "results: $txt $md"
exit "$status"
