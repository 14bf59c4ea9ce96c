#!/usr/bin/env bash
# fabric: br0:0,1
# timeout: 180
# A path MTU black hole: every frame of more than 1500 bytes crossing rxe1's link vanishes (fabric.sh
# fault blackhole: a tc drop on the bridge side, both ways) while both ends stay at MTU 9000 (rxe
# active_mtu 4096): small frames pass, large ones are lost without a word. A 64 KiB pair then
# completes no write at all (timed_out or retry_exceeded); the MTU probe's 64-byte write arrives,
# its 4096-byte one does not: mtu_blackhole, the original failure in the reason. Both directions
# across the link must say so. (This case used to set p1's MTU to 1500 instead: the sender's own
# transmit then fails, which 6.1's rxe retried in a tight loop, locking up the guest in about a third
# of the boots; a drop after the send is what a real switch port with a smaller MTU does.)
set -u
BIN=${RP_BIN:?RP_BIN not set}
fail() { echo "FAIL: $*"; "$RP_FABRIC" fault clear rxe1 2>/dev/null; exit 1; }

"$RP_FABRIC" fault blackhole rxe1 1500 || fail "fabric.sh fault blackhole rxe1 1500"
timeout 120 "$BIN" loopback -d rxe0,rxe1 --no-self -s 64K -n 50 --timeout 2 --min-bw 0 --outlier 0 --retest 0 \
	--json "$RP_RESULTS/bh.json" >"$RP_RESULTS/stdout" 2>"$RP_RESULTS/stderr"
rc=$?
tc -s filter show dev p1 ingress >"$RP_RESULTS/tc-ingress" 2>&1
"$RP_FABRIC" fault clear rxe1
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
