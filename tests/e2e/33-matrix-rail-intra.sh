#!/usr/bin/env bash
# fabric: br0:0,1,2,3
# timeout: 150
# rail and intra measure exactly their pair sets, on two nodes with two adapters each (intra pairs
# run inside one rank, both endpoints local).
set -uo pipefail
. "$RP_ROOT/tests/e2e/lib/matrix.sh"
mx_need
out=$RP_RESULTS/33
mkdir -p "$out"
common=(-s 4K -n 100 --timeout 2 --min-bw 0 --outlier 0)

RP_MX_LAYOUT=pairs mx_mpirun 2 "${common[@]}" --pattern rail --json "$out/rail.json" >"$out/rail.out" 2>&1
rc=$?
[ $rc -eq 0 ] || { echo "FAIL: rail exit $rc"; tail -20 "$out/rail.out"; exit 1; }
mx_check "$out/rail.json" '
got = sorted((p["src"]["device"], p["dst"]["device"]) for p in pairs)
assert got == sorted([("rxe0", "rxe2"), ("rxe2", "rxe0"), ("rxe1", "rxe3"), ("rxe3", "rxe1")]), got
assert all(p["status"] == "ok" and p["verified"] for p in pairs)
assert nodes["node0"]["recommended_nccl_ib_hca"] == "=rxe0:1,rxe1:1", nodes["node0"]
' || { echo "FAIL: rail pair set"; exit 1; }

RP_MX_LAYOUT=pairs mx_mpirun 2 "${common[@]}" --pattern intra --json "$out/intra.json" >"$out/intra.out" 2>&1
rc=$?
[ $rc -eq 0 ] || { echo "FAIL: intra exit $rc"; tail -20 "$out/intra.out"; exit 1; }
mx_check "$out/intra.json" '
got = sorted((p["src"]["device"], p["dst"]["device"]) for p in pairs)
assert got == sorted([("rxe0", "rxe1"), ("rxe1", "rxe0"), ("rxe2", "rxe3"), ("rxe3", "rxe2")]), got
assert all(p["status"] == "ok" and p["verified"] and p["src"]["node"] == p["dst"]["node"] for p in pairs)
' || { echo "FAIL: intra pair set"; exit 1; }

echo "PASS"
