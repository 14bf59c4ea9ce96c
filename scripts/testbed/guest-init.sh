# guest-init.sh: stage 2 of the test bed's guest, run by the initrd's busybox sh as pid 1 (not by
# the host). Stage 1 (in vm.sh) loaded the modules, mounted the host root read-only on /host and the
# per-run control folder on /ctl, and sourced /ctl/env (RP_CTL, RP_RESULTS_DIR, RP_FABRIC_SPEC,
# RP_FABRIC_SH, RP_NONCE). Here: make /host a usable root, set up the fabric, run /ctl/cmd as root
# chrooted into /host with stdout on ttyS0 and stderr on ttyS1, report the status, power off.
R=/host
begun=
. /ctl/env

# Report STATUS to vm.sh (status file and a console marker) and power off; never returns.
finish() {
	echo "$1" >/ctl/status
	dmesg >/ctl/dmesg 2>/dev/null
	echo "@@rp-testbed $RP_NONCE exit $1@@"
	sync
	poweroff -f
	sleep 5
}

# A test bed failure (not the command's): say why, exit status 125.
broken() {
	# Before the begin marker the console is the boot log; after it, it is CMD's stdout.
	if [ -n "$begun" ]; then echo "rp-testbed guest: $*" >/dev/ttyS1; else echo "rp-testbed guest: $*"; fi
	echo "$*" >/ctl/testbed-error
	finish 125
}

mount -t proc proc $R/proc || broken "mount proc"
mount -t sysfs sysfs $R/sys || broken "mount sysfs"
mount -t devtmpfs devtmpfs $R/dev || broken "mount devtmpfs"
mkdir -p $R/dev/pts $R/dev/shm 2>/dev/null
ln -s /proc/self/fd $R/dev/fd       # bash process substitution <(...) needs these
ln -s /proc/self/fd/0 $R/dev/stdin
ln -s /proc/self/fd/1 $R/dev/stdout
ln -s /proc/self/fd/2 $R/dev/stderr
mount -t devpts devpts $R/dev/pts
mount -t tmpfs -o mode=1777 tmpfs $R/dev/shm || broken "mount /dev/shm"
# The guest gets a fresh /tmp, which hides the host's. A repository that lives there (CI may clone
# into a temporary folder) is bound back in at its own path, so its scripts and binaries still run.
mkdir -p /hosttmp && mount --bind $R/tmp /hosttmp || broken "keep the host's /tmp"
mount -t tmpfs -o mode=1777 tmpfs $R/tmp || broken "mount /tmp"
case $RP_REPO in
/tmp/*)
	mkdir -p "$R$RP_REPO" && mount --bind "/hosttmp/${RP_REPO#/tmp/}" "$R$RP_REPO" ||
		broken "bind the repository $RP_REPO back over the guest's /tmp" ;;
esac
mount -t tmpfs -o mode=755 tmpfs $R/run || broken "mount /run"
: >$R/run/rp-testbed-guest   # fabric.sh refuses to run where this is missing (on a real host)
[ -d $R/sys/kernel/config ] && mount -t configfs configfs $R/sys/kernel/config 2>/dev/null

mkdir -p "$R$RP_CTL" && mount --bind /ctl "$R$RP_CTL" || broken "bind the control folder to $RP_CTL"
if [ -n "$RP_RESULTS_DIR" ]; then
	mkdir -p "$R$RP_RESULTS_DIR" 2>/dev/null
	mount -t 9p -o trans=virtio,version=9p2000.L,msize=512000 results "$R$RP_RESULTS_DIR" ||
		broken "mount the results folder on $RP_RESULTS_DIR"
fi

hostname rp-testbed
ip link set lo up
stty -F /dev/ttyS0 -onlcr 2>/dev/null
stty -F /dev/ttyS1 -onlcr 2>/dev/null
cut -d' ' -f1 /proc/uptime >/ctl/boot-seconds

# The guest's environment for anything run in the chroot; /ctl/cmd adds the caller's.
guest() {
	chroot $R /usr/bin/env -i PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
		HOME=/root "$@"
}

echo "@@rp-testbed $RP_NONCE begin@@"
begun=1
if [ -n "$RP_FABRIC_SPEC" ]; then
	guest /bin/bash "$RP_FABRIC_SH" up "$RP_FABRIC_SPEC" </dev/null >/dev/ttyS1 2>&1 ||
		broken "fabric.sh up '$RP_FABRIC_SPEC' failed"
fi
guest /bin/bash --noprofile --norc "$RP_CTL/cmd" </dev/null 2>/dev/ttyS1
finish $?
