#!/usr/bin/env bash
# fabric: br0:0,1 br1:2,3 spine:br0,br1
# timeout: 300
# Issue 29, the second fault the simulator and the test bed must agree on: dead links, not a dead
# adapter. Two leaf switches (br0: rxe0, rxe1; br1: rxe2, rxe3) joined by a spine; leaf br1's uplink
# drops everything. Under mpirun with the default sweep, the 8 cross-leaf directions fail their
# screen and pass 2 confirms them (the full --timeout, NCCL's ACK timeout), each adapter passes with
# its leaf-mate, so no endpoint is suspected dead and none is drained: 4 link suspects, no retest
# round after the sweep. Then the simulator runs the same fabric (two leaves of two ports, one spine,
# `fault uplink leaf0-1:spine0 dead`, the same options) and must agree on the round list, the
# verdict and every direction (tests/e2e/lib/sim-agree.py).
set -uo pipefail
. "$RP_ROOT/tests/e2e/lib/matrix.sh"
mx_need
out=$RP_RESULTS/45
mkdir -p "$out"
opts=(-s 4K -n 100 --timeout 5 --min-bw 0 --outlier 0)
"$RP_FABRIC" fault uplink br1 loss 100% || { echo "FAIL: could not inject loss on the uplink"; exit 1; }
mx_mpirun 4 "${opts[@]}" --json "$out/m.json" >"$out/stdout" 2>"$out/stderr"
rc=$?
cat "$out/stdout"
[ $rc -eq 1 ] || { echo "FAIL: exit $rc, want 1"; tail -20 "$out/stderr"; exit 1; }
mx_check "$out/m.json" '
sw = d["matrix"]["sweep"]
assert (sw["unreachable"], sw["dead_endpoints"], sw["confirm_rounds"]) == (8, 0, 0), sw
assert d["matrix"]["complete"] and d["matrix"]["retest_rounds"] == 0, d["matrix"]
for p in pairs:
    a, b = idx(p["src"]), idx(p["dst"])
    if (a < 2) != (b < 2):
        assert p["status"] in ("timed_out", "retry_exceeded", "resolve_failed"), p
        assert p["confirm"] == "confirmed" and p["reason"].startswith("reachability sweep:"), p
    else:
        assert p["status"] == "ok" and p["verified"], p
assert all(nodes["node%d" % n]["drain"] == [] for n in range(4)), nodes
' || { echo "FAIL: JSON report"; exit 1; }
mx_sim_agree "$out/m.json" $'nodes 4\nadapters 1\ndevice-prefix rxe\nfabric 2 1 dmodk\nfault uplink leaf0-1:spine0 dead' \
	"$out/sim.json" "${opts[@]}" || { echo "FAIL: the simulator disagrees with the test bed"; exit 1; }
echo "PASS"
