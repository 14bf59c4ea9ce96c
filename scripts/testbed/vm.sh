#!/usr/bin/env bash
# vm.sh: run one command as root inside a throw-away Soft-RoCE VM (stock Debian kernel, QEMU TCG).
#
#   vm.sh run [--fabric SPEC] [--results DIR] [--timeout S] [--console FILE] -- CMD [ARGS...]
#       Boots the VM with the host's root shared read-only (every host path is visible at the same
#       path inside), DIR shared read-write at the same path, sets up the fabric SPEC (fabric.sh up),
#       runs CMD as root in the host root (cwd kept when it exists). CMD's stdout and stderr come
#       back on vm.sh's stdout and stderr; vm.sh exits with CMD's status.
#       vm.sh's own failures: 124 the guest did not finish within S seconds (QEMU killed),
#       125 the test bed failed (cannot fetch/boot, fabric setup failed), 126 the guest kernel
#       crashed (a panic, an oops, or a soft lockup: the guest panics on one rather than spin until
#       the timeout); always with a message. --console FILE keeps the guest's whole console log
#       (kernel messages included) in FILE, however the run ended.
#   vm.sh prepare      fetch the kernel and build the initrd into the cache (run does it on demand)
#   vm.sh check        exit 0 when the test bed can run here, else print why and exit 1
#
# Inside the guest /tmp, /run and /dev/shm are fresh tmpfs (host files there are not visible) and
# the rest of the host root is read-only: write to DIR or to /tmp.
# Environment passed to CMD: PATH HOME LANG LC_* TERM CI and every RP_*, NCCL_*, UCX_*, OMPI_* variable.
#
# Settings: RP_TESTBED_CACHE (kernel + initrd cache, default <repo>/build/testbed),
# RP_TESTBED_MEM (MiB, default 3072), RP_TESTBED_SMP (default 2), RP_TESTBED_KERNEL (a
# linux-image-*-amd64 package name instead of the one linux-image-amd64 depends on),
# RP_TESTBED_KEEP=1 (keep the per-run folder with console.log, dmesg, qemu.log),
# RP_TESTBED_VERBOSE=1 (kernel boot messages on the console log).
set -euo pipefail

TB_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(cd "$TB_DIR/../.." && pwd)
CACHE=${RP_TESTBED_CACHE:-$REPO/build/testbed}
QEMU=${RP_TESTBED_QEMU:-qemu-system-x86_64}
EXIT_TIMEOUT=124
EXIT_TESTBED=125
EXIT_KERNEL=126

# Loaded in this order by the initrd, each after those it needs (doc/testbed.md). crc32_generic first:
# without it `rdma link add` fails with "failed to init crc32".
MODULES=(crc32_generic virtio_ring virtio virtio_pci_modern_dev virtio_pci_legacy_dev virtio_pci
	netfs fscache 9pnet 9pnet_virtio 9p ib_core ib_uverbs udp_tunnel ip6_udp_tunnel rdma_rxe
	ib_cm iw_cm configfs rdma_cm rdma_ucm veth llc stp bridge sch_netem
	sch_ingress cls_basic em_meta act_gact)

die() { echo "vm.sh: $*" >&2; exit $EXIT_TESTBED; }
note() { echo "vm.sh: $*" >&2; }

usage() {
	sed -n '2,/^set -euo/p' "${BASH_SOURCE[0]}" | sed '$d; s/^# \{0,1\}//' >&2
	exit 2
}

# --- cache: kernel package -> $CACHE/<kver>/{vmlinuz,modules/,initrd-<hash>.gz} ------------------

# The linux-image-*-amd64 package to use: the override, else what linux-image-amd64 depends on.
kernel_package() {
	if [ -n "${RP_TESTBED_KERNEL:-}" ]; then
		echo "$RP_TESTBED_KERNEL"
		return
	fi
	command -v apt-cache >/dev/null || return 1
	apt-cache depends linux-image-amd64 2>/dev/null |
		sed -n 's/^ *Depends: \(linux-image-[0-9][^ ]*-amd64\)$/\1/p' | head -n 1
}

# Newest kernel already in the cache (offline fallback), as its folder name.
cached_kernel() {
	local d best=
	for d in "$CACHE"/*/vmlinuz; do
		[ -f "$d" ] || continue
		best=$(basename "$(dirname "$d")")
	done
	echo "$best"
}

# Whether the cache holds kernel KVER with every module of MODULES unpacked (a cache made for a
# shorter list is fetched again: its initrd would lack the new modules).
cache_complete() {
	[ -f "$CACHE/$1/vmlinuz" ] && [ "$(cat "$CACHE/$1/modules.list" 2>/dev/null)" = "$(printf '%s\n' "${MODULES[@]}")" ]
}

# Download and unpack PKG, keep vmlinuz and the modules we load. Caller holds the lock.
fetch_kernel() {
	local pkg=$1 kver=${1#linux-image-} work f m
	work=$(mktemp -d "$CACHE/.fetch.XXXXXX")
	note "fetching $pkg with apt-get download (once; cached in $CACHE)"
	if ! (cd "$work" && apt-get download "$pkg" >"$work/apt.log" 2>&1); then
		cat "$work/apt.log" >&2
		rm -rf "$work"
		note "cannot download $pkg (apt-get download failed)"
		return 1
	fi
	dpkg -x "$work"/"$pkg"_*.deb "$work/x" || { rm -rf "$work"; die "dpkg -x failed on $pkg"; }
	mkdir -p "$work/out/modules"
	f=$(ls "$work/x/boot/vmlinuz-$kver" 2>/dev/null) || { rm -rf "$work"; die "$pkg has no boot/vmlinuz-$kver"; }
	cp "$f" "$work/out/vmlinuz"
	local mdir=$work/x/lib/modules/$kver
	for m in "${MODULES[@]}"; do
		f=$(find "$mdir/kernel" -name "$m.ko" -o -name "$m.ko.xz" -o -name "$m.ko.zst" | head -n 1)
		if [ -z "$f" ]; then
			if grep -q "/$m.ko\$" "$mdir/modules.builtin" 2>/dev/null; then
				continue
			fi
			rm -rf "$work"
			die "module $m is missing from $pkg (neither a .ko nor built in): cannot build the initrd"
		fi
		case $f in
		*.xz) xz -dc "$f" >"$work/out/modules/$m.ko" || { rm -rf "$work"; die "cannot unpack $f"; } ;;
		*.zst) zstd -qdc "$f" >"$work/out/modules/$m.ko" || { rm -rf "$work"; die "cannot unpack $f"; } ;;
		*) cp "$f" "$work/out/modules/$m.ko" ;;
		esac
	done
	printf '%s\n' "${MODULES[@]}" >"$work/out/modules.list"
	rm -rf "${CACHE:?}/$kver"
	mv "$work/out" "$CACHE/$kver"
	rm -rf "$work"
}

# The initrd's /init (stage 1): load the modules, mount the shares, hand over to stage 2 (guest-init.sh
# read from the host root, so guest logic changes need no rebuild). Failures print the exit marker.
stage1_init() {
	cat <<'EOF'
#!/bin/busybox sh
/bin/busybox --install -s /bin
export PATH=/bin
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev
nonce=$(sed -n 's/.*rp_nonce=\([0-9a-zA-Z]*\).*/\1/p' /proc/cmdline)
grep -q rp_verbose /proc/cmdline || echo 1 >/proc/sys/kernel/printk
fail() {
	echo "rp-testbed stage1: $*"
	echo "@@rp-testbed $nonce exit 125@@"
	poweroff -f
}
for m in $(cat /modules.order); do
	[ -f /modules/$m.ko ] || continue
	insmod /modules/$m.ko || fail "insmod $m failed"
done
mkdir -p /host /ctl
mount -t 9p -o trans=virtio,version=9p2000.L,msize=512000,cache=loose,ro hostroot /host || fail "mount hostroot failed"
mount -t 9p -o trans=virtio,version=9p2000.L,msize=512000 ctl /ctl || fail "mount ctl failed"
[ -f /ctl/env ] || fail "no /ctl/env"
set -a
. /ctl/env
set +a
[ -f "/host$RP_STAGE2" ] || fail "stage 2 not found at $RP_STAGE2"
export RP_NONCE=$nonce
exec /bin/sh "/host$RP_STAGE2"
EOF
}

# Build (once per kernel and stage 1 content) the busybox initrd; print its path. Caller holds the lock.
build_initrd() {
	local kver=$1 hash work m
	local bb
	bb=$(command -v busybox) || die "busybox not found (apt-get install busybox-static)"
	if ldd "$bb" >/dev/null 2>&1; then
		die "$bb is dynamically linked; the initrd needs busybox-static (apt-get install busybox-static)"
	fi
	hash=$( { stage1_init; printf '%s\n' "${MODULES[@]}"; sha256sum <"$bb"; } | sha256sum | cut -c1-12)
	local out=$CACHE/$kver/initrd-$hash.gz
	if [ ! -f "$out" ]; then
		work=$(mktemp -d "$CACHE/.initrd.XXXXXX")
		mkdir -p "$work/root/bin" "$work/root/modules" "$work/root/proc" "$work/root/sys" "$work/root/dev"
		cp "$bb" "$work/root/bin/busybox"
		stage1_init >"$work/root/init"
		chmod 755 "$work/root/init"
		for m in "${MODULES[@]}"; do
			[ -f "$CACHE/$kver/modules/$m.ko" ] && cp "$CACHE/$kver/modules/$m.ko" "$work/root/modules/"
		done
		printf '%s\n' "${MODULES[@]}" >"$work/root/modules.order"
		(cd "$work/root" && find . | cpio -o -H newc --quiet | gzip -1) >"$work/initrd.gz" ||
			{ rm -rf "$work"; die "building the initrd failed (cpio, gzip)"; }
		mv "$work/initrd.gz" "$out"
		rm -rf "$work"
	fi
	echo "$out"
}

# The uncompressed ELF kernel next to vmlinuz: QEMU boots it directly (PVH entry), skipping the
# firmware's kernel loader and the xz decompressor, which under TCG halves the boot. An empty file
# records that it cannot be had (then vmlinuz is used). Caller holds the lock.
extract_vmlinux() {
	local dir=$CACHE/$1 off tmp ok=
	tmp=$(mktemp "$dir/.vmlinux.XXXXXX")
	# (Readers stop early, so these pipes end on SIGPIPE: judge the output, not pipefail.)
	off=$(LC_ALL=C grep -obUaP '\xFD7zXZ\x00' "$dir/vmlinuz" 2>/dev/null | head -n 1 | cut -d: -f1 || true)
	if [ -n "$off" ]; then
		tail -c +$((off + 1)) "$dir/vmlinuz" 2>/dev/null | xz -dc --single-stream >"$tmp" 2>/dev/null || true
		if [ "$(head -c 4 "$tmp" | od -An -c | tr -d ' ')" = '177ELF' ] &&
			{ ! command -v readelf >/dev/null || readelf -n "$tmp" 2>/dev/null | grep -q Xen; }; then
			ok=1
		fi
	fi
	if [ -n "$ok" ]; then
		chmod 644 "$tmp"
		mv "$tmp" "$dir/vmlinux"
	else
		note "no PVH-bootable vmlinux in $1's vmlinuz: booting vmlinuz (slower)"
		: >"$dir/vmlinux"
		rm -f "$tmp"
	fi
}

# Make sure the cache holds a kernel and an initrd; set KVER, VMLINUZ, INITRD. Concurrent callers
# serialise on $CACHE/.lock; the fast path (everything present) takes the lock only briefly.
prepare() {
	mkdir -p "$CACHE" || die "cannot create the cache $CACHE"
	command -v flock >/dev/null || die "flock not found (util-linux)"
	local pkg
	pkg=$(kernel_package || true)
	exec 9>"$CACHE/.lock"
	flock 9
	if [ -n "$pkg" ]; then
		KVER=${pkg#linux-image-}
		if ! cache_complete "$KVER" && ! fetch_kernel "$pkg"; then
			KVER=$(cached_kernel)
			[ -n "$KVER" ] || die "no kernel: $pkg cannot be downloaded and the cache $CACHE is empty"
			note "using the cached $KVER instead"
		fi
	else
		KVER=$(cached_kernel)
		[ -n "$KVER" ] || die "no kernel package: apt-cache does not know linux-image-amd64 and the cache $CACHE is empty"
		note "apt-cache gave no kernel package; using the cached $KVER"
	fi
	VMLINUZ=$CACHE/$KVER/vmlinuz
	KERNEL_IMAGE=$VMLINUZ
	[ -f "$CACHE/$KVER/vmlinux" ] || extract_vmlinux "$KVER"
	[ ! -s "$CACHE/$KVER/vmlinux" ] || KERNEL_IMAGE=$CACHE/$KVER/vmlinux
	INITRD=$(build_initrd "$KVER")
	flock -u 9
	exec 9>&-
}

check() {
	command -v "$QEMU" >/dev/null || { echo "vm.sh: $QEMU not found (apt-get install qemu-system-x86)" >&2; return 1; }
	command -v busybox >/dev/null || { echo "vm.sh: busybox not found (apt-get install busybox-static)" >&2; return 1; }
	(prepare) || return 1
}

# --- run -------------------------------------------------------------------------------------------

# A value written into the guest's /ctl/env (sourced by busybox sh): no quotes, no newlines.
safe_value() {
	case $2 in
	*[\'\"\\\`\$]* | *$'\n'*) die "$1 must not contain quotes, backslashes, \$ or newlines: $2" ;;
	esac
}

# Print the console stream between the begin and exit markers (CMD's stdout), CRs removed.
filter_console() {
	local nonce=$1 state=0 line
	while IFS= read -r line || [ -n "$line" ]; do
		line=${line%$'\r'}
		if [ $state -eq 0 ]; then
			[[ $line == *"@@rp-testbed $nonce begin@@"* ]] && state=1
		elif [ $state -eq 1 ]; then
			if [[ $line == *"@@rp-testbed $nonce exit "* ]]; then
				state=2
				line=${line%%@@rp-testbed*}
				[ -z "$line" ] || printf '%s' "$line"
			else
				printf '%s\n' "$line"
			fi
		fi
	done
}

RUN_DIR=
QEMU_PID=
CONSOLE_OUT=
cleanup() {
	local rc=$?
	if [ -n "$QEMU_PID" ] && kill -0 "$QEMU_PID" 2>/dev/null; then
		kill -TERM "$QEMU_PID" 2>/dev/null || true
		sleep 1
		kill -KILL "$QEMU_PID" 2>/dev/null || true
	fi
	if [ -n "$CONSOLE_OUT" ] && [ -n "$RUN_DIR" ] && [ -f "$RUN_DIR/console.log" ]; then
		tr -d '\r' <"$RUN_DIR/console.log" >"$CONSOLE_OUT" || note "cannot write the console log to $CONSOLE_OUT"
	fi
	if [ -n "$RUN_DIR" ]; then
		if [ "${RP_TESTBED_KEEP:-0}" = 1 ]; then
			note "kept $RUN_DIR"
		else
			rm -rf "$RUN_DIR"
		fi
	fi
	exit $rc
}

run() {
	local fabric= results= timeout_s=600
	while [ $# -gt 0 ]; do
		case $1 in
		--fabric) fabric=${2?--fabric needs a value}; shift 2 ;;
		--results) results=${2?--results needs a value}; shift 2 ;;
		--timeout) timeout_s=${2?--timeout needs a value}; shift 2 ;;
		--console) CONSOLE_OUT=${2?--console needs a file}; shift 2 ;;
		--) shift; break ;;
		-h | --help) usage ;;
		*) echo "vm.sh run: unknown option '$1' (CMD goes after --)" >&2; exit 2 ;;
		esac
	done
	[ $# -gt 0 ] || { echo "vm.sh run: no command (vm.sh run [options] -- CMD [ARGS])" >&2; exit 2; }
	[[ $timeout_s =~ ^[1-9][0-9]*$ ]] || { echo "vm.sh run: --timeout wants whole seconds, not '$timeout_s'" >&2; exit 2; }
	command -v "$QEMU" >/dev/null || die "$QEMU not found: install qemu-system-x86 (scripts/install-deps.sh)"
	if [ -n "$results" ]; then
		mkdir -p "$results" || die "cannot create the results folder $results"
		results=$(cd "$results" && pwd -P)
		safe_value --results "$results"
		[[ $results != *[[:space:],]* ]] || die "--results path must not contain spaces or commas: $results"
	fi
	safe_value --fabric "$fabric"
	safe_value "the test bed path" "$TB_DIR"

	prepare

	trap cleanup EXIT
	trap 'exit 130' INT
	trap 'exit 143' TERM
	RUN_DIR=$(mktemp -d "${TMPDIR:-/tmp}/rp-vm.XXXXXX")
	RUN_DIR=$(cd "$RUN_DIR" && pwd -P)
	[[ $RUN_DIR != *[[:space:],]* ]] || die "TMPDIR must not contain spaces or commas: $RUN_DIR"
	local nonce
	nonce=$(od -An -N6 -tx1 /dev/urandom | tr -d ' \n')

	cat >"$RUN_DIR/env" <<EOF
RP_STAGE2='$TB_DIR/guest-init.sh'
RP_CTL='$RUN_DIR'
RP_RESULTS_DIR='$results'
RP_FABRIC_SPEC='$fabric'
RP_FABRIC_SH='$TB_DIR/fabric.sh'
RP_REPO='$(cd "$REPO" && pwd -P)'
EOF
	{
		echo "# written by vm.sh: the command, its environment and working directory"
		local v
		while IFS= read -r v; do
			case $v in
			PATH | HOME | LANG | LC_* | TERM | CI | RP_* | NCCL_* | UCX_* | OMPI_*)
				[[ $v == RP_TESTBED_* ]] && continue
				printf 'export %s=%q\n' "$v" "${!v}" ;;
			esac
		done < <(compgen -e)
		printf 'cd %q 2>/dev/null || cd /\n' "$PWD"
		printf 'exec'
		printf ' %q' "$@"
		printf '\n'
	} >"$RUN_DIR/cmd"
	: >"$RUN_DIR/console.log"
	: >"$RUN_DIR/stderr.log"

	# A kernel stuck in a loop (a soft lockup: seen once with rxe in CI, 3,000 s on one CPU until the
	# CI's limit) panics at once; panic=-1 reboots and -no-reboot turns that into QEMU's exit.
	local append="console=ttyS0 panic=-1 softlockup_panic=1 oops=panic rp_nonce=$nonce"
	if [ "${RP_TESTBED_VERBOSE:-0}" = 1 ]; then append+=" rp_verbose"; else append+=" quiet"; fi
	local share="security_model=none,multidevs=remap"
	local qemu_args=(-accel tcg -cpu max -m "${RP_TESTBED_MEM:-3072}" -smp "${RP_TESTBED_SMP:-2}"
		-nodefaults -display none -no-reboot -nic none
		-kernel "$KERNEL_IMAGE" -initrd "$INITRD" -append "$append"
		-chardev "file,id=s0,path=$RUN_DIR/console.log,append=on" -serial chardev:s0
		-chardev "file,id=s1,path=$RUN_DIR/stderr.log,append=on" -serial chardev:s1
		-virtfs "local,path=/,mount_tag=hostroot,$share,readonly=on"
		-virtfs "local,path=$RUN_DIR,mount_tag=ctl,$share")
	[ -z "$results" ] || qemu_args+=(-virtfs "local,path=$results,mount_tag=results,$share")

	local t0=$SECONDS
	timeout -k 5 "$timeout_s" "$QEMU" "${qemu_args[@]}" </dev/null >"$RUN_DIR/qemu.log" 2>&1 &
	QEMU_PID=$!
	tail -s 0.2 -n +1 -f --pid=$QEMU_PID "$RUN_DIR/stderr.log" | sed -u 's/\r$//' >&2 &
	local err_pid=$!
	# In the background too: a trapped signal interrupts `wait`, not a foreground pipeline.
	tail -s 0.2 -n +1 -f --pid=$QEMU_PID "$RUN_DIR/console.log" | filter_console "$nonce" &
	wait $! || true
	local qrc=0
	wait $QEMU_PID || qrc=$?
	QEMU_PID=
	wait $err_pid || true

	local crash
	crash=$(tr -d '\r' <"$RUN_DIR/console.log" | grep -m 1 -E 'BUG: soft lockup|Kernel panic|BUG: unable to handle|general protection fault|Oops:' || true)
	local status=
	[ -f "$RUN_DIR/status" ] && status=$(tr -dc 0-9 <"$RUN_DIR/status")
	if [ -z "$status" ]; then
		status=$(tr -d '\r' <"$RUN_DIR/console.log" | sed -n "s/.*@@rp-testbed $nonce exit \([0-9]*\)@@.*/\1/p" | tail -n 1)
	fi
	if [ $qrc -eq 124 ] || [ $qrc -eq 137 ]; then
		note "TIMEOUT: the guest did not finish within $timeout_s s; QEMU was killed. Console tail:"
		tr -d '\r' <"$RUN_DIR/console.log" | tail -n 20 | sed 's/^/  | /' >&2
		exit $EXIT_TIMEOUT
	fi
	if [ -z "$status" ] && [ -n "$crash" ]; then
		note "the guest kernel crashed: ${crash#*] }. Console tail:"
		tr -d '\r' <"$RUN_DIR/console.log" | grep -A 25 -m 1 -F "$crash" | sed 's/^/  | /' >&2
		exit $EXIT_KERNEL
	fi
	if [ -z "$status" ]; then
		note "the guest stopped without reporting a status (QEMU exit $qrc). QEMU said:"
		sed 's/^/  | /' "$RUN_DIR/qemu.log" >&2
		note "console:"
		tr -d '\r' <"$RUN_DIR/console.log" | tail -n 40 | sed 's/^/  | /' >&2
		exit $EXIT_TESTBED
	fi
	if [ -f "$RUN_DIR/testbed-error" ]; then
		note "test bed failure: $(cat "$RUN_DIR/testbed-error")"
		tr -d '\r' <"$RUN_DIR/console.log" | tail -n 20 | sed 's/^/  | /' >&2
	fi
	[ "${RP_TESTBED_TIMING:-0}" != 1 ] || note "guest ran $((SECONDS - t0)) s, boot $(cat "$RUN_DIR/boot-seconds" 2>/dev/null || echo ?) s"
	exit "$status"
}

case ${1:-} in
run) shift; run "$@" ;;
prepare) prepare; echo "kernel $KVER"; echo "image $KERNEL_IMAGE"; echo "initrd $INITRD" ;;
check) check ;;
*) usage ;;
esac
