#!/usr/bin/env bash
# fabric: br0:0,1
# timeout: 60
# 'rdmaprobe devices' on real Soft-RoCE devices: verbs lists them, ibv_query_port answers (active
# MTU), the GID NCCL would use is the IPv4 RoCE v2 one, and a device whose /dev/infiniband/uverbsN
# is gone is reported as present in sysfs but not usable, with that reason.
set -u
BIN=${RP_BIN:?RP_BIN not set}
command -v jq >/dev/null || { echo "FAIL: jq is missing in the test bed (scripts/install-deps.sh installs it)"; exit 1; }

fail() { echo "FAIL: $*"; exit 1; }

out=$("$BIN" devices --json) || fail "devices --json exited $?"
echo "$out" | jq -e '.verbs_consulted == true and .no_device_reason == null' >/dev/null ||
	fail "verbs not consulted or no devices: $(echo "$out" | jq -c '{verbs_consulted, no_device_reason}')"
for dev in rxe0 rxe1; do
	d=$(echo "$out" | jq -c --arg n "$dev" '.devices[] | select(.name == $n)')
	[ -n "$d" ] || fail "$dev not reported"
	echo "$d" | jq -e '.in_verbs == true and .unusable_reason == null and .pci == null' >/dev/null ||
		fail "$dev: expected in_verbs true, usable, not on PCI: $d"
	echo "$d" | jq -e '.ports[0] | .state == "ACTIVE" and .link_layer == "Ethernet" and .active_mtu >= 1024' \
		>/dev/null || fail "$dev port 1 not ACTIVE Ethernet with an MTU from verbs: $d"
	idx=$(echo "$d" | jq '.ports[0].nccl_gid_index')
	gid=$(echo "$d" | jq -r --argjson i "$idx" '.ports[0].gids[] | select(.index == $i) | .gid + " " + .type')
	case "$gid" in
	0000:0000:0000:0000:0000:ffff:*" RoCE v2") ;;
	*) fail "$dev: NCCL GID index $idx is not an IPv4 RoCE v2 GID ($gid)" ;;
	esac
done

# Take rxe1's character device away: verbs no longer lists it, sysfs still shows it.
uv=$(grep -l '^rxe1$' /sys/class/infiniband_verbs/uverbs*/ibdev | head -n 1)
[ -n "$uv" ] || fail "no uverbs device for rxe1"
uv=$(basename "$(dirname "$uv")")
devnum=$(cat "/sys/class/infiniband_verbs/$uv/dev")
restore() { [ -e "/dev/infiniband/$uv" ] || mknod "/dev/infiniband/$uv" c "${devnum%%:*}" "${devnum##*:}"; }
trap restore EXIT
rm -f "/dev/infiniband/$uv"
out=$("$BIN" devices --json) || fail "devices --json exited $? without /dev/infiniband/$uv"
echo "$out" | jq -e '.devices[] | select(.name == "rxe1") | .in_verbs == false and
	(.unusable_reason | contains("/dev/infiniband/'"$uv"'"))' >/dev/null ||
	fail "rxe1 without $uv: $(echo "$out" | jq -c '.devices[] | select(.name == "rxe1") | {in_verbs, unusable_reason}')"
echo "$out" | jq -e '.devices[] | select(.name == "rxe0") | .in_verbs == true' >/dev/null ||
	fail "rxe0 should still be listed by verbs"
"$BIN" devices | grep -q "NOT USABLE: not listed by ibv_get_device_list" || fail "text output does not say rxe1 is not usable"
echo "PASS"
