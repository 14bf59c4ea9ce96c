#!/usr/bin/env bash
# fabric: br0:0,1,2,3
# timeout: 150
# rail and intra measure exactly their pair sets, on two nodes with two adapters each (intra pairs
# run inside one rank, both endpoints local). rail --concurrent-rails: the round is played rail by
# rail (the solo pairs, the matrix's), then with both rails at once; each concurrent pair carries its
# solo rate and ratio, concurrent_drop exactly when the ratio is below 1 - --concurrent-drop (here
# 40%), in the JSON, on stdout and in the HTML beside the pair.
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

RP_MX_LAYOUT=pairs mx_mpirun 2 "${common[@]}" --pattern rail --concurrent-rails --concurrent-drop 40% \
	--json "$out/conc.json" --html "$out/conc.html" >"$out/conc.out" 2>&1
rc=$?
[ $rc -eq 0 ] || { echo "FAIL: rail --concurrent-rails exit $rc"; tail -20 "$out/conc.out"; exit 1; }
drops=$(mx_check "$out/conc.json" '
want = sorted([("rxe0", "rxe2"), ("rxe2", "rxe0"), ("rxe1", "rxe3"), ("rxe3", "rxe1")])
assert sorted((p["src"]["device"], p["dst"]["device"]) for p in pairs) == want
assert d["matrix"]["rounds"] == 3 and d["matrix"]["complete"], d["matrix"]
solo = {(p["src"]["device"], p["dst"]["device"]): p for p in pairs}
cr = d["concurrent_rails"]
assert abs(cr["max_drop"] - 0.4) < 1e-9, cr["max_drop"]
conc = cr["pairs"]
assert sorted((e["pair"]["src"]["device"], e["pair"]["dst"]["device"]) for e in conc) == want
drops = 0
for e in conc:
    p = e["pair"]
    s = solo[(p["src"]["device"], p["dst"]["device"])]
    assert p["status"] == "ok" and p["verified"], p
    assert e["round"] == 0 and abs(e["solo_gbps"] - s["gbps"]) <= 1e-6 * s["gbps"], e
    # the report writes 6 significant digits: the ratio of the written rates agrees to about 1e-5
    assert abs(e["ratio"] - p["gbps"] / s["gbps"]) < 1e-4 * max(1.0, e["ratio"]), e
    assert ("concurrent_drop" in p["warnings"]) == (e["ratio"] < 0.6), e
    assert "concurrent_drop" not in s["warnings"], s
    drops += "concurrent_drop" in p["warnings"]
assert d["verdict"]["concurrent_drop"] == drops and d["verdict"]["concurrent_failed"] == 0, d["verdict"]
print(drops)
') || { echo "FAIL: concurrent rails"; exit 1; }
grep -q "concurrent rails: 4 pairs, 0 failed under load, $drops with concurrent_drop" "$out/conc.out" ||
	{ echo "FAIL: concurrent rails summary on stdout"; tail -12 "$out/conc.out"; exit 1; }
grep -q 'id="concurrent-rails"' "$out/conc.html" || { echo "FAIL: no concurrent-rails section in the HTML"; exit 1; }
[ "$(grep -c 'warnings: concurrent_drop</span></td></tr>' "$out/conc.html")" -eq "$drops" ] ||
	{ echo "FAIL: the HTML does not mark the concurrent_drop pairs"; exit 1; }

echo "PASS"
