#!/usr/bin/env bash
# fabric: br0:0,1,2,3
# timeout: 200
# Issue 26 item 18: an adapter named with -d that is not usable (its link DOWN) is a finding, never
# dropped in silence. With rxe3's netdev down: `loopback -d =rxe0,rxe3 --no-self` names rxe3 as
# port_not_active and exits 1 (before: only "--no-self with 1 port leaves no pair", exit 2, rxe3
# never named); without --no-self rxe0's self pair runs and passes, and the run still exits 1 with
# the finding in the text and as a fatal port_not_active warning in the JSON (before: PASS, exit 0).
set -u
"$RP_FABRIC" fault down rxe3 || exit 1
for _ in $(seq 50); do
	grep -q DOWN /sys/class/infiniband/rxe3/ports/1/state && break
	sleep 0.1
done
grep -q DOWN /sys/class/infiniband/rxe3/ports/1/state || { echo "FAIL: rxe3 is not DOWN"; exit 1; }
"$RP_BIN" loopback -d =rxe0,rxe3 --no-self -s 4K -n 20 >"$RP_RESULTS/stdout1" 2>"$RP_RESULTS/stderr1"
rc=$?
cat "$RP_RESULTS/stdout1" "$RP_RESULTS/stderr1"
[ "$rc" -eq 1 ] || { echo "FAIL: --no-self exit $rc, expected 1"; exit 1; }
grep -q 'port_not_active: .*rxe3' "$RP_RESULTS/stdout1" || { echo "FAIL: rxe3 not named as port_not_active"; exit 1; }
"$RP_BIN" loopback -d =rxe0,rxe3 -s 4K -n 20 --json "$RP_RESULTS/lb.json" >"$RP_RESULTS/stdout2" 2>"$RP_RESULTS/stderr2"
rc=$?
cat "$RP_RESULTS/stdout2"
[ "$rc" -eq 1 ] || { tail "$RP_RESULTS/stderr2"; echo "FAIL: exit $rc, expected 1"; exit 1; }
grep -q 'port_not_active: .*rxe3' "$RP_RESULTS/stdout2" || { echo "FAIL: rxe3 not named in the text"; exit 1; }
python3 - "$RP_RESULTS/lb.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
assert [(p["src"]["device"], p["dst"]["device"], p["status"]) for p in r["pairs"]] == [("rxe0", "rxe0", "ok")], r["pairs"]
w = [x for x in r.get("warnings", []) if x["code"] == "port_not_active"]
assert w and w[0]["fatal"] and "rxe3" in w[0]["message"], r.get("warnings")
print("ok: rxe3 is a port_not_active finding:", w[0]["message"])
PY
