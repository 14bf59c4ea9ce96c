#!/usr/bin/env bash
# fabric: br0:0,1,2
# timeout: 240
# Drift and nccl_crash in the matrix (issues 11 and 10). rxe2's netdev at MTU 1500 (rxe active MTU
# 1024) against 4096 on the two others: rank 0 names node2 in a `drift` warning on the active MTU
# with the majority value, in the text and the JSON; every pair still passes (an MTU mismatch is a
# warning). NCCL_IB_ADDR_RANGE without a slash under --nccl-version 2.21.5 crashes that release on
# these nodes: every node says nccl_crash and the job exits 1, with no adapter drained (a job
# setting, not the fabric). -x 1 gives the RoCE v2 GID that the crashing rule would not.
set -uo pipefail
. "$RP_ROOT/tests/e2e/lib/matrix.sh"
mx_need
out=$RP_RESULTS/71
mkdir -p "$out"
"$RP_FABRIC" fault mtu rxe2 1500 || { echo "FAIL: could not set the MTU"; exit 1; }
NCCL_IB_ADDR_RANGE=10.0.0.0 mx_mpirun 3 -s 4K -n 50 --timeout 10 --min-bw 0 --outlier 0 --retest 0 -x 1 \
	--nccl-version 2.21.5 --json "$out/m.json" >"$out/stdout" 2>"$out/stderr"
rc=$?
cat "$out/stdout"
"$RP_FABRIC" fault clear rxe2
[ $rc -eq 1 ] || { echo "FAIL: exit $rc, want 1 (nccl_crash)"; tail -20 "$out/stderr"; exit 1; }
grep -q "^warning drift: .*node2" "$out/stdout" || { echo "FAIL: no drift line naming node2"; exit 1; }
grep -q "^nccl_crash: NCCL 2.21.5" "$out/stdout" || { echo "FAIL: no nccl_crash line"; exit 1; }
grep -q "WARNING nccl_crash" "$out/stderr" || { echo "FAIL: no nccl_crash warning before measuring"; exit 1; }
mx_check "$out/m.json" '
assert len(pairs) == 6 and d["matrix"]["complete"], len(pairs)
assert all(p["status"] == "ok" and p["verified"] for p in pairs), [p["status"] for p in pairs]
drift = [w for w in d["warnings"] if w["code"] == "drift"]
assert len(drift) == 1, d["warnings"]
w = drift[0]
assert w["field"] == "mtu" and w["value"] == "1024" and w["majority"] == "4096", w
assert "node2" in w["nodes"] and "node0" not in w["nodes"] and w["n_odd"] == 1 and w["n_majority"] == 2, w
assert all(n["drain"] == [] for n in d["nodes"]), d["nodes"]
' || { echo "FAIL: JSON report"; exit 1; }
echo "PASS"
