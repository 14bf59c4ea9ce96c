#!/usr/bin/env bash
# fabric: br0:0,1,2,3
# timeout: 150
# Two ranks per node, both offering the node's two adapters: every endpoint is driven by exactly one
# rank (one each here), nothing is measured twice: 4 endpoints, 12 directed pairs, all ok.
set -uo pipefail
. "$RP_ROOT/tests/e2e/lib/matrix.sh"
mx_need
out=$RP_RESULTS/36
mkdir -p "$out"
RP_MX_LAYOUT=shared mx_mpirun 4 -s 4K -n 100 --timeout 2 --min-bw 0 --outlier 0 --json "$out/m.json" >"$out/stdout" 2>&1
rc=$?
tail -8 "$out/stdout"
[ $rc -eq 0 ] || { echo "FAIL: exit $rc"; exit 1; }
mx_check "$out/m.json" '
eps = d["matrix"]["endpoints"]
assert [(e["node"], e["device"]) for e in eps] == [("node0", "rxe0"), ("node0", "rxe1"), ("node1", "rxe2"), ("node1", "rxe3")], eps
assert sorted(e["rank"] for e in eps) == [0, 1, 2, 3], eps
assert eps[0]["rank"] in (0, 1) and eps[1]["rank"] in (0, 1) and eps[2]["rank"] in (2, 3)
got = sorted((p["src"]["device"], p["dst"]["device"]) for p in pairs)
want = sorted(("rxe%d" % a, "rxe%d" % b) for a in range(4) for b in range(4) if a != b)
assert got == want, got
assert all(p["status"] == "ok" and p["verified"] for p in pairs)
assert [n["endpoints"] for n in d["nodes"]] == [["rxe0:1", "rxe1:1"], ["rxe2:1", "rxe3:1"]]
' || { echo "FAIL: JSON report"; exit 1; }
echo "PASS"
