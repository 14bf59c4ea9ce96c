#!/usr/bin/env bash
# fabric: br0:0,1 br1:2
# timeout: 240
# rdmaprobe nccl on real Soft-RoCE devices (runs inside the test bed VM): verbs is consulted, the
# selection follows NCCL_IB_HCA in verbs order, the GID NCCL picks on rxe is the IPv4 RoCE v2 entry
# (index 1), a downed link is reported, and the exit status says whether NCCL would misbehave;
# NCCL variables are read as NCCL reads them, and --nccl-version applies an older release (also
# to loopback's default selection), and loopback fails with nccl_crash where that release crashes.
set -u

fail() { echo "FAIL: $*"; exit 1; }
# The "selected" array of a JSON report, one "dev:port" per line, in order.
selected() { sed -n '/"selected": \[/,/\]/p' <<<"$1" | grep -o '"[^"]*:[0-9]*"' | tr -d '"'; }
# Run rdmaprobe nccl with args; sets out and rc.
nccl() { out=$("$RP_BIN" nccl "$@" 2>&1); rc=$?; }

for d in rxe0 rxe1 rxe2; do
	[ -d "/sys/class/infiniband/$d" ] || fail "test bed: $d missing (the case's fabric header sets it up)"
done

nccl --json
[ "$rc" -eq 0 ] || fail "no NCCL_IB_HCA: exit $rc: $out"
grep -q '"verbs_consulted": true' <<<"$out" || fail "verbs not consulted: $out"
[ "$(selected "$out" | tr '\n' ' ')" = "rxe0:1 rxe1:1 rxe2:1 " ] || fail "selection: $(selected "$out")"
for d in rxe0 rxe1 rxe2; do
	grep -q "\"$d:1\": 1" <<<"$out" || fail "$d:1: GID index is not 1: $out"
done
grep -q '"not_in_verbs"' <<<"$out" && fail "not_in_verbs on devices verbs lists: $out"
grep -q '"recommended_nccl_ib_hca": "=rxe0:1,rxe1:1,rxe2:1"' <<<"$out" || fail "recommendation: $out"

NCCL_IB_HCA=rxe1 nccl --json
[ "$rc" -eq 0 ] && [ "$(selected "$out")" = "rxe1:1" ] || fail "NCCL_IB_HCA=rxe1: exit $rc, $(selected "$out")"

nccl --json --hca '^=rxe0'
[ "$rc" -eq 0 ] && [ "$(selected "$out" | tr '\n' ' ')" = "rxe1:1 rxe2:1 " ] || fail "^=rxe0: exit $rc: $out"

nccl --json --hca rxe9
[ "$rc" -eq 1 ] && grep -q '"no_match"' <<<"$out" && grep -q '"nothing_selected"' <<<"$out" ||
	fail "rxe9: exit $rc: $out"

nccl --json --hca '=rxe0:1, rxe2'
[ "$rc" -eq 1 ] && grep -q '"whitespace"' <<<"$out" || fail "whitespace: exit $rc: $out"
grep -q '"recommended_nccl_ib_hca": "=rxe0:1,rxe2:1"' <<<"$out" || fail "whitespace recommendation: $out"

# NCCL uses a link-local GID it is told to use (gid_invalid); one past the table fails the port.
NCCL_IB_GID_INDEX=0 nccl --json
[ "$rc" -eq 1 ] && grep -q '"gid_invalid"' <<<"$out" && grep -q '"rxe0:1": 0' <<<"$out" ||
	fail "NCCL_IB_GID_INDEX=0 (link-local): exit $rc: $out"
NCCL_IB_GID_INDEX=4096 nccl --json
[ "$rc" -eq 1 ] && grep -q '"bad_gid_override"' <<<"$out" && grep -q '"rxe0:1": null' <<<"$out" ||
	fail "NCCL_IB_GID_INDEX=4096: exit $rc: $out"

# A value NCCL reads without a word is never a usage error: 0x1 is 1 (env_parsed_as).
NCCL_IB_GID_INDEX=0x1 nccl --json
[ "$rc" -eq 0 ] && grep -q '"env_parsed_as"' <<<"$out" && grep -q '"rxe0:1": 1' <<<"$out" ||
	fail "NCCL_IB_GID_INDEX=0x1: exit $rc: $out"

# The release is said; 2.18.6 has no automatic GID choice (index 0, link-local on rxe).
nccl --json --nccl-version 2.18.6
[ "$rc" -eq 1 ] && grep -q '"source": "option"' <<<"$out" && grep -q '"rxe0:1": 0' <<<"$out" ||
	fail "--nccl-version 2.18.6: exit $rc: $out"

nccl
[ "$rc" -eq 0 ] && grep -q 'verdict          usable' <<<"$out" || fail "text report: exit $rc: $out"

# loopback's default -d is NCCL's selection under the release: 2.18.6 has no automatic GID
# (NCCL_IB_GID_INDEX defaults to 0), 2.30.7 picks the IPv4 RoCE v2 entry (1); the JSON says which.
for v in 2.18.6:0:option 2.30.7:1:option ::; do
	IFS=: read -r ver gid src <<<"$v"
	lb=$RP_RESULTS/loopback-${ver:-found}.json
	NCCL_IB_HCA='=rxe0' "$RP_BIN" loopback -s 4K -n 20 --timeout 5 ${ver:+--nccl-version "$ver"} --json "$lb" \
		>"$RP_RESULTS/loopback-${ver:-found}.out" 2>&1
	python3 - "$lb" "$ver" "$gid" "$src" <<'PY' || fail "loopback --nccl-version ${ver:-(none)}: $(cat "$RP_RESULTS/loopback-${ver:-found}.out")"
import json, sys
r = json.load(open(sys.argv[1]))
ver, gid, src = sys.argv[2:5]
nv = r["nccl_version"]
p = r["pairs"][0]
if ver:
    assert nv["version"] == ver and nv["source"] == src, nv
    assert p["src"]["gid_index"] == int(gid) and p["dst"]["gid_index"] == int(gid), p["src"]
else:
    assert nv["source"] in ("default", "libnccl"), nv
    assert nv["source"] != "default" or nv["version"] == "2.30.7", nv
PY
done

# nccl_crash (issue 10): NCCL_IB_ADDR_RANGE without a slash crashes 2.21.5, not 2.23.4 (it ignores
# the range). loopback still measures (the GID given), then warns in text and JSON and exits 1 as
# nccl does, without blaming the fabric.
for v in 2.21.5:1 2.23.4:0; do
	IFS=: read -r ver want <<<"$v"
	NCCL_IB_HCA='=rxe0' NCCL_IB_ADDR_RANGE=10.0.0.0 "$RP_BIN" loopback -d =rxe0 --gid-index 1 -s 4K -n 20 --timeout 5 \
		--nccl-version "$ver" --json "$RP_RESULTS/loopback-crash-$ver.json" >"$RP_RESULTS/loopback-crash-$ver.out" 2>&1
	rc=$?
	[ "$rc" -eq "$want" ] || fail "loopback nccl_crash $ver: exit $rc: $(cat "$RP_RESULTS/loopback-crash-$ver.out")"
done
grep -q '^nccl_crash: NCCL 2.21.5 (option) would crash on this node' "$RP_RESULTS/loopback-crash-2.21.5.out" ||
	fail "loopback nccl_crash: no text line: $(cat "$RP_RESULTS/loopback-crash-2.21.5.out")"
grep -q '^nccl_crash' "$RP_RESULTS/loopback-crash-2.23.4.out" && fail "loopback 2.23.4: nccl_crash said"
# one python for both reports (its start-up is slow under TCG)
python3 - "$RP_RESULTS/loopback-crash-2.21.5.json" "$RP_RESULTS/loopback-crash-2.23.4.json" <<'PY' ||
import json, sys
crash, fine = (json.load(open(f)) for f in sys.argv[1:3])
for r in (crash, fine):
    assert r["pairs"][0]["status"] == "ok", r["pairs"][0]
w = crash["warnings"]
assert [x["code"] for x in w] == ["nccl_crash"] and w[0]["fatal"] is True, w
assert "NCCL_IB_ADDR_RANGE" in w[0]["message"], w
assert "warnings" not in fine, fine.get("warnings")
PY
	fail "loopback nccl_crash: JSON $(cat "$RP_RESULTS"/loopback-crash-*.json)"

# Link down: NCCL silently skips the port; naming it is fatal.
"$RP_FABRIC" fault down rxe2 || fail "fabric.sh fault down rxe2"
for _ in $(seq 50); do
	grep -q ACTIVE /sys/class/infiniband/rxe2/ports/1/state || break
	sleep 0.1
done
nccl --json --hca =rxe2
[ "$rc" -eq 1 ] && grep -q '"port_not_active"' <<<"$out" || fail "rxe2 down: exit $rc: $out"
nccl --json
[ "$rc" -eq 0 ] && [ "$(selected "$out" | tr '\n' ' ')" = "rxe0:1 rxe1:1 " ] || fail "rxe2 down, unset: exit $rc: $out"
echo "PASS: nccl on rxe"
exit 0
