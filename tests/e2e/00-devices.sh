#!/usr/bin/env bash
# 00-devices: `rdmaprobe devices --json` lists every rxe device as usable (in verbs, port ACTIVE,
# Ethernet, an IPv4 RoCE v2 GID that matches sysfs, NCCL's GID index for it) and
# `rdmaprobe nccl --json` selects them all with that GID index.
# fabric: br0:0,1,2 br1:3
# timeout: 90
set -uo pipefail
. "$RP_ROOT/scripts/testbed/e2e-lib.sh"
command -v jq >/dev/null || e2e_fail "jq is missing (scripts/install-deps.sh installs it)"

devs=$(bash "$RP_FABRIC" show | awk '{print $1}')
[ -n "$devs" ] || e2e_fail "the fabric has no devices"

# Both commands exist: each must exit 0 and print valid JSON.
run_json() {
	local what=$1 out=$RP_RESULTS/$1.json rc=0
	"$RP_BIN" "$what" --json >"$out" 2>"$RP_RESULTS/$what.err" || rc=$?
	if [ $rc -ne 0 ]; then
		cat "$RP_RESULTS/$what.err"
		e2e_fail "rdmaprobe $what --json exited $rc"
	fi
	jq -e . "$out" >/dev/null || e2e_fail "rdmaprobe $what --json printed no valid JSON (see $out)"
}

run_json devices
J=$RP_RESULTS/devices.json

# What sysfs says: each device's IPv4 RoCE v2 GID index and GID.
want={ sep=
declare -A gid_of idx_of
for d in $devs; do
	idx=$(e2e_gid_index "$d")
	[ -n "$idx" ] || e2e_fail "test bed: $d has no IPv4 RoCE v2 GID in sysfs"
	read -r gid_of[$d] <"/sys/class/infiniband/$d/ports/1/gids/$idx"
	idx_of[$d]=$idx
	want+="$sep\"$d\":$idx"
	sep=,
done
want+="}"

# One jq run (each exec is slow under emulation): a line per fabric device, fields split by |.
jq -r --argjson want "$want" '.devices[] | .name as $n | select($want | has($n)) | .ports[0] as $p
	| ([$p.gids[]? | select(.index == $want[$n])][0] // {}) as $g
	| [$n, .in_verbs, .unusable_reason, $p.port, $p.state, $p.link_layer, $p.active_mtu,
	   $p.nccl_gid_index, $g.gid, $g.type] | map(tostring) | join("|")' "$J" >"$RP_RESULTS/devices.rows" ||
	e2e_fail "devices --json does not have the documented shape (see $J)"
for d in $devs; do
	row=$(grep "^$d|" "$RP_RESULTS/devices.rows")
	[ -n "$row" ] || e2e_fail "$d is missing from devices --json"
	IFS='|' read -r name in_verbs unusable port state ll mtu ngid jgid jtype <<<"$row"
	idx=${idx_of[$d]}
	[ "$in_verbs" = true ] || e2e_fail "$d: in_verbs is $in_verbs, want true"
	[ "$unusable" = null ] || e2e_fail "$d: unusable_reason '$unusable', want null"
	[ "$port" = 1 ] || e2e_fail "$d: first port is $port, want 1"
	[ "$state" = ACTIVE ] || e2e_fail "$d: port state $state, want ACTIVE"
	[ "$ll" = Ethernet ] || e2e_fail "$d: link layer $ll, want Ethernet"
	[ "$mtu" = 4096 ] || e2e_fail "$d: active_mtu $mtu, want 4096 (netdev MTU 9000)"
	[ "$jgid" = "${gid_of[$d]}" ] || e2e_fail "$d: GID $idx is '$jgid' in the JSON, '${gid_of[$d]}' in sysfs"
	[ "$jtype" = "RoCE v2" ] || e2e_fail "$d: GID $idx type '$jtype', want 'RoCE v2'"
	[ "$ngid" = "$idx" ] || e2e_fail "$d: nccl_gid_index $ngid, want $idx (the IPv4 RoCE v2 GID)"
	e2e_note "$d: usable, ACTIVE, Ethernet, RoCE v2 GID $idx $jgid, nccl_gid_index $idx"
done

run_json nccl
N=$RP_RESULTS/nccl.json
IFS='|' read -r usable selected gids < <(jq -r '[.usable, (.selected | join(",")),
	(.gid_index | to_entries | map("\(.key)=\(.value)") | join(","))] | map(tostring) | join("|")' "$N") ||
	e2e_fail "nccl --json does not have the documented shape (see $N)"
[ "$usable" = true ] || e2e_fail "nccl --json says usable=$usable"
for d in $devs; do
	[[ ",$selected," == *",$d:1,"* ]] || e2e_fail "nccl --json does not select $d:1 (selected: $selected)"
	[[ ",$gids," == *",$d:1=${idx_of[$d]},"* ]] || e2e_fail "nccl --json gid_index for $d:1 is not ${idx_of[$d]} ($gids)"
done
e2e_note "nccl selects $selected with GID indexes $gids"
exit 0
