#!/usr/bin/env bash
# fabric: br0:0,1
# timeout: 180
# A path MTU black hole: rxe1's bridge-side veth (p1) at MTU 1500 while both hosts' sides stay at
# 9000 (rxe active_mtu 4096 at both ends): every frame larger than 1500 bytes vanishes on the path,
# small ones pass. A 64 KiB pair then completes no write at all (timed_out or retry_exceeded); the
# MTU probe's 64-byte write arrives, its 4096-byte one does not: mtu_blackhole, the original failure
# in the reason. Both directions across the link must say so. (Issue 11 warns that an MTU set on the
# bridge side once locked up a 6.1 guest's rxe with millions of send errors: on this test bed's
# kernel two runs were stable (63 s, then 44 s with --timeout 2), both pairs mtu_blackhole each time;
# drop this case if it ever hangs.)
set -u
BIN=${RP_BIN:?RP_BIN not set}
fail() { echo "FAIL: $*"; ip link set p1 mtu 9000 2>/dev/null; exit 1; }

ip link set p1 mtu 1500 || fail "ip link set p1 mtu 1500"
timeout 120 "$BIN" loopback -d rxe0,rxe1 --no-self -s 64K -n 50 --timeout 2 --min-bw 0 --outlier 0 --retest 0 \
	--json "$RP_RESULTS/bh.json" >"$RP_RESULTS/stdout" 2>"$RP_RESULTS/stderr"
rc=$?
ip link set p1 mtu 9000
cat "$RP_RESULTS/stdout"
tail -5 "$RP_RESULTS/stderr"
[ "$rc" -eq 1 ] || fail "loopback exited $rc, expected 1 (the pairs fail)"
python3 - "$RP_RESULTS/bh.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
bad = []
for p in r["pairs"]:
    print("%s->%s: %s: %s" % (p["src"]["device"], p["dst"]["device"], p["status"], p["reason"]))
    if p["status"] != "mtu_blackhole":
        bad.append("%s->%s is %s" % (p["src"]["device"], p["dst"]["device"], p["status"]))
    elif "a 64-byte write arrives, a 4096-byte one" not in p["reason"]:
        bad.append("reason without the probe sizes")
if len(r["pairs"]) != 2:
    bad.append("%d pairs, expected 2" % len(r["pairs"]))
if bad:
    print("FAIL:\n  " + "\n  ".join(bad)); sys.exit(1)
print("ok: both directions through the black hole are mtu_blackhole")
PY
