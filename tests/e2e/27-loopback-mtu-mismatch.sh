#!/usr/bin/env bash
# fabric: br0:0,1
# timeout: 200
# Two ends at different active MTUs (fabric.sh fault mtu rxe1 1500: rxe1's active_mtu 1024 against
# rxe0's 4096) passed silently before: every pair between rxe0 and rxe1 must carry the mtu_mismatch
# warning naming both MTUs, the self pairs (one MTU) none. The pairs' status is not asserted here
# (how rxe treats a frame over the smaller MTU is the black-hole question of issue 11, not this rule).
set -u
BIN=${RP_BIN:?RP_BIN not set}
fail() { echo "FAIL: $*"; exit 1; }

"$RP_FABRIC" fault mtu rxe1 1500 || exit 1
"$BIN" loopback -d rxe0,rxe1 -s 4K -n 200 --timeout 5 --min-bw 0 --outlier 0 --retest 0 \
	--json "$RP_RESULTS/mtu.json" >"$RP_RESULTS/stdout" 2>"$RP_RESULTS/stderr"
rc=$?
cat "$RP_RESULTS/stdout"
[ "$rc" -le 1 ] || { tail -20 "$RP_RESULTS/stderr"; fail "loopback exited $rc"; }
grep -q 'warning: mtu_mismatch: rxe0:1 runs at an active MTU of 4096, rxe1:1 at 1024' "$RP_RESULTS/stdout" ||
	fail "no mtu_mismatch line naming both MTUs"
python3 - "$RP_RESULTS/mtu.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
bad = []
for p in r["pairs"]:
    s, d = p["src"]["device"], p["dst"]["device"]
    mism = "mtu_mismatch" in p["warnings"]
    print("%s->%s: %s mtu %s/%s %s" % (s, d, p["status"], p["src"]["mtu"], p["dst"]["mtu"], p["warnings"]))
    if mism != (s != d):
        bad.append("%s->%s: mtu_mismatch %s" % (s, d, mism))
if len(r["pairs"]) != 4:
    bad.append("%d pairs" % len(r["pairs"]))
if bad:
    print("FAIL:\n  " + "\n  ".join(bad))
    sys.exit(1)
print("ok: the two cross pairs carry mtu_mismatch, the self pairs none")
PY
