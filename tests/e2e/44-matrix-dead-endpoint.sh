#!/usr/bin/env bash
# fabric: br0:0,1,2,3,4
# timeout: 300
# Issue 29 under mpirun on real Soft-RoCE devices: five nodes (one adapter each), rxe4's link at 100%
# loss, the default sweep. rxe4 fails its first probes with four distinct peers that pass with the
# others (MX_EPDEAD_PEERS), so the run decides the endpoint: one confirmation round (NCCL's ACK
# timeout, the full --timeout, the MTU probe), then its 8 directions are endpoint_dead with no
# deadline each, rxe4 is drained, nothing else. Then the simulator runs the same fault (the same
# shape, `dead-endpoint node4/rxe0`, the same options) and must agree on the round list, the verdict
# and every direction (tests/e2e/lib/sim-agree.py).
set -uo pipefail
. "$RP_ROOT/tests/e2e/lib/matrix.sh"
mx_need
out=$RP_RESULTS/44
mkdir -p "$out"
opts=(-s 4K -n 100 --timeout 5 --min-bw 0 --outlier 0)
"$RP_FABRIC" fault loss rxe4 100% || { echo "FAIL: could not inject loss"; exit 1; }
mx_mpirun 5 "${opts[@]}" --json "$out/m.json" >"$out/stdout" 2>"$out/stderr"
rc=$?
"$RP_FABRIC" fault clear rxe4
cat "$out/stdout"
[ $rc -eq 1 ] || { echo "FAIL: exit $rc, want 1"; tail -20 "$out/stderr"; exit 1; }
mx_check "$out/m.json" '
sw = d["matrix"]["sweep"]
assert (sw["dead_endpoints"], sw["endpoint_dead_directions"], sw["confirm_rounds"]) == (1, 8, 1), sw
assert d["matrix"]["complete"] and d["matrix"]["retest_rounds"] == 0, d["matrix"]
for p in pairs:
    if 4 in (idx(p["src"]), idx(p["dst"])):
        assert p["status"] == "endpoint_dead" and p["confirm"] == "confirmed", p
        assert p["reason"].startswith("endpoint node4/rxe4:1 is dead"), p["reason"]
    else:
        assert p["status"] == "ok" and p["verified"], p
assert nodes["node4"]["drain"] == ["rxe4:1"], nodes["node4"]
assert all(nodes["node%d" % n]["drain"] == [] and nodes["node%d" % n]["unusable"] == [] for n in range(4))
' || { echo "FAIL: JSON report"; exit 1; }
mx_sim_agree "$out/m.json" $'nodes 5\nadapters 1\ndevice-prefix rxe\ndead-endpoint node4/rxe0' "$out/sim.json" "${opts[@]}" ||
	{ echo "FAIL: the simulator disagrees with the test bed"; exit 1; }
echo "PASS"
