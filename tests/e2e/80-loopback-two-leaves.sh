#!/usr/bin/env bash
# fabric: br0:0,1 br1:2,3 spine:br0,br1
# timeout: 300
# Two leaf switches (br0: rxe0, rxe1; br1: rxe2, rxe3) joined by a spine (sp0). Healthy, every pair
# crosses the fabric it should: the cross-leaf pairs go through the spine. Then leaf br1's uplink
# drops everything: the cross-leaf pairs fail, the pairs within a leaf pass, and no adapter is
# drained: each adapter moves data with its leaf-mate, so the fault is on a path, not an adapter.
set -u
run() {   # name: loopback over the four devices; its exit status
	"$RP_BIN" loopback -d rxe0,rxe1,rxe2,rxe3 --no-self -s 4K -n 200 --timeout 4 --outlier 0 \
		--json "$RP_RESULTS/$1.json" >"$RP_RESULTS/$1.out" 2>"$RP_RESULTS/$1.err"
}
run healthy
rc=$?
cat "$RP_RESULTS/healthy.out"
[ "$rc" -eq 0 ] || { echo "FAIL: healthy two-leaf fabric: exit $rc"; cat "$RP_RESULTS/healthy.err"; exit 1; }

bash "$RP_FABRIC" fault uplink br1 loss 100%
run uplink
rc=$?
cat "$RP_RESULTS/uplink.out"
[ "$rc" -eq 1 ] || { echo "FAIL: dead uplink: exit $rc, expected 1"; cat "$RP_RESULTS/uplink.err"; exit 1; }
! grep -q '^drain:' "$RP_RESULTS/uplink.out" || { echo "FAIL: a dead uplink drains no adapter"; exit 1; }
python3 - "$RP_RESULTS/uplink.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
leaf = {"rxe0": 0, "rxe1": 0, "rxe2": 1, "rxe3": 1}
bad = []
for p in r["pairs"]:
    s, d = p["src"]["device"], p["dst"]["device"]
    cross = leaf[s] != leaf[d]
    if cross and p["status"] == "ok":
        bad.append("%s->%s crosses the dead uplink but passed" % (s, d))
    if not cross and p["status"] != "ok":
        bad.append("%s->%s stays in its leaf but is %s" % (s, d, p["status"]))
assert len(r["pairs"]) == 12, len(r["pairs"])
if bad:
    print("FAIL:", *bad, sep="\n  ")
    sys.exit(1)
PY
