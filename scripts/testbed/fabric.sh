#!/usr/bin/env bash
# fabric.sh: Soft-RoCE devices on emulated Ethernet segments, INSIDE the test bed VM only.
#
#   fabric.sh up 'br0:0,1,2 br1:3'   rxeN on veth hN (peer pN plugged into bridge brB), for each N
#                                     listed after brB; address 10.B.0.(N+1)/24 on hN, MTU 9000
#                                     (rxe active_mtu 4096). Devices on one bridge reach each other
#                                     over the wire, a device reaches itself, other bridges are
#                                     unreachable.
#   fabric.sh up 'br0:0,1 br1:2,3 spine:br0,br1'
#                                     two leaf switches joined by a spine: each leaf bridge has an
#                                     uplink (veth uBRIDGE in the leaf, sBRIDGE in bridge sp0), and
#                                     the joined leaves share the first one's subnet, so devices on
#                                     different leaves reach each other through the spine
#   fabric.sh down                    remove all of it (and pending faults); fine when nothing is up
#   fabric.sh show                    one line per device: rxeN hN brB address
#   fabric.sh fault loss rxeN 5%      netem loss on the device's link, both directions (hN and pN);
#                                     100% = nothing gets through; 0% = no loss
#   fabric.sh fault rate rxeN 8mbit   netem rate limit on the device's link, both directions: a slow
#                                     but healthy link (nothing is lost; packets queue)
#   fabric.sh fault down rxeN [after S]   link (hN) down now, or S seconds from now in the background
#   fabric.sh fault up rxeN           link back up
#   fabric.sh fault mtu rxeN 1500     MTU of hN (1500 gives an rxe active_mtu of 1024)
#   fabric.sh fault blackhole rxeN 1500   a path MTU black hole: every frame of more than 1500
#                                     bytes crossing the device's link vanishes without a word (a tc
#                                     drop on pN, both ways), smaller ones pass; both ends keep
#                                     MTU 9000, so nothing fails to send (a switch port with a
#                                     smaller MTU that drops jumbo frames)
#   fabric.sh fault clear rxeN        no loss, no black hole, link up, MTU 9000
#   fabric.sh fault uplink brB loss 100%   netem loss on leaf brB's uplink to the spine, both ways
#                                     (0% clears it): every path between brB's devices and another
#                                     leaf's crosses it, paths within brB do not
# What it does is printed tersely on stderr.
set -euo pipefail

STATE=/run/rp-fabric
MTU=9000
TABLE_BASE=100   # routing table of device N: TABLE_BASE + N

say() { echo "fabric: $*" >&2; }
die() { echo "fabric.sh: $*" >&2; exit 1; }
trap 'echo "fabric.sh: failed: $BASH_COMMAND" >&2' ERR

usage() {
	sed -n '2,/^set -euo/p' "${BASH_SOURCE[0]}" | sed '$d; s/^# \{0,1\}//' >&2
	exit 2
}

# This script rewires routing rules and interfaces: never let it loose on a real host.
guard() {
	[ -e /run/rp-testbed-guest ] || [ "${RP_FABRIC_FORCE:-0}" = 1 ] ||
		die "refusing to run outside the test bed VM (no /run/rp-testbed-guest); use scripts/testbed/vm.sh"
	[ "$(id -u)" -eq 0 ] || die "must run as root"
}

sysctl_set() { echo "$2" >"/proc/sys/${1//.//}"; }

# Wait until rxeN's port 1 is ACTIVE and has its IPv4-mapped GID (the RoCE v2 GID NCCL and perftest use).
wait_ready() {
	local dev=$1 i g gid state= port=/sys/class/infiniband/$1/ports/1
	for ((i = 0; i < 100; i++)); do
		read -r state <"$port/state" 2>/dev/null || true
		if [[ $state == *ACTIVE* ]]; then
			for g in 0 1 2 3 4 5 6 7; do
				gid=
				read -r gid <"$port/gids/$g" 2>/dev/null || true
				[[ $gid != 0000:0000:0000:0000:0000:ffff:* ]] || return 0
			done
		fi
		sleep 0.1
	done
	die "$dev not ready after 10 s (port state '$state', no IPv4 GID)"
}

# netdev (hN) of rxeN, from the state file.
netdev_of() {
	local dev=$1 line
	[[ $dev =~ ^rxe[0-9]+$ ]] || die "not a test bed device: '$dev' (rxeN)"
	line=$(awk -v d="$dev" '$1 == d' "$STATE/devices" 2>/dev/null || true)
	[ -n "$line" ] || die "$dev is not in the fabric (fabric.sh show)"
	echo "$line" | awk '{print $2}'
}

up() {
	local spec=${1:-}
	[ -n "$spec" ] || die "up needs a fabric, e.g. 'br0:0,1,2 br1:3'"
	[ ! -d "$STATE" ] || { say "a fabric is up: taking it down first"; down; }
	local seg br list bidx=0 n
	local -a devs=() brs=() bnum=()
	declare -A seen=() subnet_of=()
	local spine=
	for seg in $spec; do
		if [[ $seg =~ ^spine:([a-z][a-z0-9]{0,9}(,[a-z][a-z0-9]{0,9})+)$ ]]; then
			[ -z "$spine" ] || die "one spine only"
			spine=${BASH_REMATCH[1]//,/ }
		fi
	done
	for seg in $spec; do
		[[ $seg == spine:* ]] && continue
		[[ $seg =~ ^([a-z][a-z0-9]{0,9}):([0-9]+(,[0-9]+)*)$ ]] || die "bad segment '$seg' (want brB:N,N,...)"
		br=${BASH_REMATCH[1]}
		list=${BASH_REMATCH[2]}
		[ -z "${seen[$br]:-}" ] || die "bridge $br given twice"
		seen[$br]=1
		if [[ $br =~ ^br([0-9]+)$ ]] && [ "${BASH_REMATCH[1]}" -le 255 ]; then bidx=$((10#${BASH_REMATCH[1]})); fi
		[ -z "${seen[net$bidx]:-}" ] || die "bridges $br and another would share subnet 10.$bidx.0.0/24"
		seen[net$bidx]=1
		subnet_of[$br]=$bidx
		for n in ${list//,/ }; do
			n=$((10#$n))
			[ "$n" -le 250 ] || die "device number $n too large (0..250)"
			[ -z "${seen[dev$n]:-}" ] || die "device $n listed twice"
			seen[dev$n]=1
			devs+=("$n"); brs+=("$br"); bnum+=("$bidx")
		done
		bidx=$((bidx + 1))
	done

	local first=
	for br in $spine; do
		[ -n "${seen[$br]:-}" ] || die "spine names $br, which is no bridge of the fabric"
		[ -n "$first" ] || first=$br
		for i in "${!brs[@]}"; do
			[ "${brs[$i]}" = "$br" ] && bnum[$i]=${subnet_of[$first]}
		done
	done

	mkdir -p "$STATE"
	: >"$STATE/devices"
	: >"$STATE/uplinks"
	# Defaults before the devices exist, so hN inherits them.
	local k
	for k in all default; do
		sysctl_set "net.ipv4.conf.$k.accept_local" 1
		sysctl_set "net.ipv4.conf.$k.rp_filter" 0
		sysctl_set "net.ipv4.conf.$k.arp_ignore" 1
		sysctl_set "net.ipv4.conf.$k.arp_announce" 2
		sysctl_set "net.ipv6.conf.$k.accept_dad" 0
	done

	# One `ip -batch` (each exec costs ~0.1 s under emulation). hN gets a fixed MAC
	# 02:52:50:00:B:N, so the static neighbours below need no lookup.
	local i j addr table created= rules batch=
	rules=$(ip rule show)
	# Local addresses would talk through lo, which rxe never sees: per-device tables (pref 10) come
	# before the local table, so the local table moves from pref 0 to 1000.
	[[ $rules == *"1000:"*"lookup local"* ]] || batch+="rule add pref 1000 lookup local"$'\n'
	[[ $rules != "0:"*"lookup local"* ]] || batch+="rule del pref 0 lookup local"$'\n'
	for br in "${brs[@]}"; do
		case " $created " in *" $br "*) continue ;; esac
		batch+="link add name $br type bridge stp_state 0 forward_delay 0"$'\n'
		batch+="link set $br mtu $MTU up"$'\n'
		created+=" $br"
	done
	for i in "${!devs[@]}"; do
		n=${devs[$i]}
		addr=10.${bnum[$i]}.0.$((n + 1))
		table=$((TABLE_BASE + n))
		batch+="link add h$n address $(mac_of "${bnum[$i]}" "$n") mtu $MTU type veth peer name p$n mtu $MTU"$'\n'
		batch+="link set p$n master ${brs[$i]} up"$'\n'
		batch+="addr add $addr/24 dev h$n"$'\n'
		batch+="link set h$n up"$'\n'
		batch+="rule add pref 10 iif lo from $addr lookup $table"$'\n'
		batch+="route add 10.${bnum[$i]}.0.0/24 dev h$n src $addr table $table"$'\n'
		# Without this a device cannot reach itself (every self pair fails at RTR).
		batch+="route add local $addr dev h$n scope host src $addr table $table"$'\n'
		echo "rxe$n h$n ${brs[$i]} $addr" >>"$STATE/devices"
	done
	if [ -n "$spine" ]; then
		batch+="link add name sp0 type bridge stp_state 0 forward_delay 0"$'\n'
		batch+="link set sp0 mtu $MTU up"$'\n'
		for br in $spine; do
			batch+="link add u$br mtu $MTU type veth peer name s$br mtu $MTU"$'\n'
			batch+="link set u$br master $br up"$'\n'
			batch+="link set s$br master sp0 up"$'\n'
			echo "$br u$br s$br sp0" >>"$STATE/uplinks"
		done
	fi
	# Static neighbours between devices of one segment: loss faults then hit RDMA traffic, not ARP.
	for i in "${!devs[@]}"; do
		for j in "${!devs[@]}"; do
			[ "$i" != "$j" ] && [ "${bnum[$i]}" = "${bnum[$j]}" ] || continue
			batch+="neigh replace 10.${bnum[$j]}.0.$((devs[j] + 1)) lladdr $(mac_of "${bnum[$j]}" "${devs[$j]}") dev h${devs[$i]} nud permanent"$'\n'
		done
	done
	printf '%s' "$batch" | ip -batch - || die "ip -batch failed"
	batch=
	for n in "${devs[@]}"; do
		batch+="link add rxe$n type rxe netdev h$n"$'\n'
	done
	printf '%s' "$batch" | rdma -b - || die "rdma link add failed"
	for n in "${devs[@]}"; do
		wait_ready "rxe$n"
	done
	local line=
	for br in $created; do
		line+=" $br:"
		for i in "${!devs[@]}"; do
			[ "${brs[$i]}" = "$br" ] && line+=" rxe${devs[$i]}(h${devs[$i]} 10.${bnum[$i]}.0.$((devs[i] + 1)))"
		done
		line+=";"
	done
	[ -z "$spine" ] || line+=" spine sp0: ${spine// /, };"
	say "up${line%;}"
}

# The fixed MAC of hN on bridge index B.
mac_of() { printf '02:52:50:00:%02x:%02x' "$1" "$2"; }

down() {
	local pid dev netdev br rest batch=
	if [ -f "$STATE/jobs" ]; then
		# Each job leads its own process group (setsid): stop it and its sleep.
		while read -r pid; do kill -- "-$pid" 2>/dev/null || true; done <"$STATE/jobs"
	fi
	# Every rxe device, also one a case added by hand.
	for dev in $(rdma link show 2>/dev/null | sed -n 's/^link \(rxe[0-9]*\)\/.*/\1/p' | sort -u); do
		batch+="link delete $dev"$'\n'
	done
	# A leftover process holding a device would make the delete wait: bound it.
	[ -z "$batch" ] || printf '%s' "$batch" | timeout 30 rdma -f -b - || say "warning: rdma link delete failed or timed out"
	batch=
	local bridges=
	if [ -f "$STATE/devices" ]; then
		while read -r dev netdev br rest; do
			batch+="link del $netdev"$'\n'
			batch+="route flush table $((TABLE_BASE + ${dev#rxe}))"$'\n'
			batch+="rule del pref 10 from $rest"$'\n'
			case " $bridges " in *" $br "*) ;; *) bridges+=" $br" ;; esac
		done <"$STATE/devices"
	fi
	if [ -f "$STATE/uplinks" ]; then
		while read -r br up rest; do batch+="link del $up"$'\n'; done <"$STATE/uplinks"
		[ ! -s "$STATE/uplinks" ] || batch+="link del sp0"$'\n'
	fi
	for br in $bridges; do batch+="link del $br"$'\n'; done
	[ -z "$batch" ] || printf '%s' "$batch" | ip -force -batch - 2>/dev/null || true
	rm -rf "$STATE"
	say "down"
}

show() {
	[ -f "$STATE/devices" ] || { say "no fabric"; return 0; }
	cat "$STATE/devices"
}

# fault uplink brB loss P%: netem loss on the leaf's uplink (both veth ends: each direction once).
uplink_fault() {
	local br=${1:-} what=${2:-} pct=${3:-} line
	line=$(awk -v b="$br" '$1 == b' "$STATE/uplinks" 2>/dev/null || true)
	[ -n "$line" ] || die "$br has no uplink (fabric.sh up '... spine:brA,brB')"
	[ "$what" = loss ] && [[ $pct =~ ^[0-9]+(\.[0-9]+)?%$ ]] || die "usage: fault uplink brB loss P%"
	set -- $line
	printf 'qdisc replace dev %s root netem loss %s\n' "$2" "$pct" "$3" "$pct" | tc -batch -
	say "uplink of $br loses $pct each way ($2, $3)"
}

fault() {
	local kind=${1:-} dev=${2:-} netdev
	if [ "$kind" = uplink ]; then
		shift
		uplink_fault "$@"
		return
	fi
	[ -n "$kind" ] && [ -n "$dev" ] || die "fault needs a kind and a device: fault loss|rate|down|up|mtu|blackhole|clear rxeN ..."
	netdev=$(netdev_of "$dev")
	local peer=p${netdev#h}
	case $kind in
	loss)
		local pct=${3:-}
		[[ $pct =~ ^[0-9]+(\.[0-9]+)?%$ ]] || die "loss wants a percentage such as 5% or 100%, not '$pct'"
		printf 'qdisc replace dev %s root netem loss %s\n' "$netdev" "$pct" "$peer" "$pct" | tc -batch -
		say "$dev loses $pct each way ($netdev, $peer)"
		;;
	rate)
		local rate=${3:-}
		[[ $rate =~ ^[0-9]+(\.[0-9]+)?(kbit|mbit|gbit)$ ]] || die "rate wants a rate such as 800kbit or 8mbit, not '$rate'"
		# a deep queue: a rate limit must slow the link down, not drop what it cannot send at once
		printf 'qdisc replace dev %s root netem rate %s limit 100000\n' "$netdev" "$rate" "$peer" "$rate" | tc -batch -
		say "$dev limited to $rate each way ($netdev, $peer)"
		;;
	down)
		if [ $# -eq 2 ]; then
			ip link set "$netdev" down
			say "$dev link down ($netdev)"
		else
			[ "${3:-}" = after ] && [[ ${4:-} =~ ^[0-9]+(\.[0-9]+)?$ ]] ||
				die "usage: fault down rxeN [after SECONDS]"
			setsid bash -c 'sleep "$1"; ip link set "$2" down' fault-down "$4" "$netdev" \
				</dev/null >/dev/null 2>&1 &
			echo $! >>"$STATE/jobs"
			say "$dev link down in $4 s ($netdev)"
		fi
		;;
	up)
		ip link set "$netdev" up
		say "$dev link up ($netdev)"
		;;
	mtu)
		local mtu=${3:-}
		[[ $mtu =~ ^[0-9]+$ ]] && [ "$mtu" -ge 576 ] && [ "$mtu" -le 65535 ] || die "mtu wants bytes (576..65535), not '$mtu'"
		ip link set "$netdev" mtu "$mtu"
		say "$dev mtu $mtu ($netdev)"
		;;
	blackhole)
		local max=${3:-}
		[[ $max =~ ^[0-9]+$ ]] && [ "$max" -ge 64 ] && [ "$max" -le 65535 ] ||
			die "blackhole wants the largest frame that passes, in bytes (64..65535), not '$max'"
		# tc on the bridge side: ingress sees hN's frames, egress those going to hN. A drop, not an
		# MTU: an MTU makes the sender's own transmit fail (rxe retries that in a tight loop, which
		# locked up 6.1 guests), a black hole loses the frame after it was sent.
		printf '%s\n' "qdisc replace dev $peer clsact" \
			"filter add dev $peer ingress basic match meta(pkt_len gt $max) action drop" \
			"filter add dev $peer egress basic match meta(pkt_len gt $max) action drop" | tc -batch -
		say "$dev drops every frame over $max bytes, each way ($peer)"
		;;
	clear)
		printf 'qdisc del dev %s root\n' "$netdev" "$peer" | tc -force -batch - 2>/dev/null || true
		tc qdisc del dev "$peer" clsact 2>/dev/null || true
		ip link set "$netdev" mtu $MTU up
		say "$dev cleared ($netdev)"
		;;
	*) die "unknown fault '$kind' (loss, rate, down, up, mtu, blackhole, clear, uplink)" ;;
	esac
}

cmd=${1:-}
[ $# -gt 0 ] && shift
case $cmd in
up) guard; up "$@" ;;
down) guard; down ;;
show) show ;;
fault) guard; fault "$@" ;;
*) usage ;;
esac
